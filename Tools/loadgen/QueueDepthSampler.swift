import NotifyRuntime

/// Samples the messages in the broker's queues about once a second (what the management API shows, refreshed every
/// 5 s) until cancelled, at most an hour's worth.
enum QueueDepthSampler {
    static let maximumSamples = 3600

    /// Starts sampling; the task answers the samples, in seconds since `origin`, once cancelled.
    static func start(_ broker: BrokerStats, origin: ContinuousClock.Instant) -> Task<[BacklogCheck.Sample], Never> {
        Task {
            var samples: [BacklogCheck.Sample] = []
            while !Task.isCancelled && samples.count < maximumSamples {
                if let messages = try? await broker.queuedMessages() {
                    let second = (ContinuousClock.now - origin).inSeconds
                    samples.append(BacklogCheck.Sample(second: (second * 10).rounded() / 10, messages: messages))
                }
                try? await Task.sleep(for: .seconds(1))
            }
            return samples
        }
    }
}
