import Foundation
import Logging
import Metrics
import NotifyAMQP
import NotifyModels
import NotifyRuntime
import ServiceLifecycle

/// Takes batches of change-event messages, resolves every user's devices in one query,
/// and publishes the push jobs per provider, many per message, and the batches themselves to the
/// live exchange, before the consumer acks.
struct ChangeFanoutHandler: Sendable {
    let resolver: SubscriptionResolver
    let broadcasts: BroadcastStreamer
    let publisher: AMQPPublisher
    let logger: Logger
    var jobsPerMessage = 500

    func handle(_ deliveries: [AMQPDelivery]) async -> [AMQPDisposition] {
        var dispositions = [AMQPDisposition](repeating: .ack, count: deliveries.count)
        var events: [ChangeEvent] = []
        var live: [AMQPOutboundMessage] = []
        var users = Set<UserKey>()
        for (index, delivery) in deliveries.enumerated() {
            do {
                let batch = try ChangeEventBatch(decodingJSON: delivery.body)
                for event in batch.events where event.eventSource == nil { users.insert(UserKey(appId: event.appId, userId: event.userId)) }
                events.append(contentsOf: batch.events)
                // Edges holding live streams get the batch as it is (no re-encoding); none listening is fine.
                live.append(AMQPOutboundMessage(exchange: QueueNames.liveExchange, routingKey: "", body: delivery.body, mandatory: false))
            } catch {
                dispositions[index] = .deadLetter(reason: "not a change-event batch: \(error)")
            }
        }
        let done = await RetryUntilShutdown.succeeded("fan out", logger: logger) {
            let devices = try await resolver.devices(of: users)
            let pushes = messages(for: events.filter { $0.eventSource == nil }, devices: devices)
            try await publisher.publish(pushes.messages + live)
            pushes.count()
            for event in events where event.eventSource != nil {
                try await broadcast(event)
            }
        }
        return done ? dispositions : RetryUntilShutdown.requeueing(dispositions)
    }

    /// Streams a broadcast's audience and publishes its jobs page by page (each page confirmed before the next).
    /// A redelivered broadcast starts over: the repeated pushes carry the same ids and collapse ids.
    private func broadcast(_ event: ChangeEvent) async throws {
        var pushed = 0
        try await broadcasts.forEachPage(appId: event.appId, eventSource: event.eventSource ?? "") { devices in
            let jobs = PushJobBuilder.jobs(for: event, devices: devices)
            pushed += jobs.count
            let pushes = messages(for: jobs)
            try await publisher.publish(pushes.messages)
            pushes.count()
        }
        logger.info("broadcast fanned out", metadata: ["notificationId": "\(event.notificationId)", "pushes": "\(pushed)"])
    }

    private func messages(for events: [ChangeEvent], devices: [UserKey: [SubscriptionResolver.Device]]) -> PushJobMessages {
        var jobs: [PushJob] = []
        for event in events {
            guard let userDevices = devices[UserKey(appId: event.appId, userId: event.userId)] else { continue }
            jobs += PushJobBuilder.jobs(for: event, devices: userDevices)
        }
        return messages(for: jobs)
    }

    /// Push jobs grouped per provider, `jobsPerMessage` to a message.
    private func messages(for jobs: [PushJob]) -> PushJobMessages {
        var jobsByProvider: [Platform: [PushJob]] = [:]
        for job in jobs { jobsByProvider[job.platform.provider, default: []].append(job) }
        var messages: [AMQPOutboundMessage] = []
        for (provider, jobs) in jobsByProvider {
            var start = 0
            while start < jobs.count {
                let end = min(start + jobsPerMessage, jobs.count)
                let body = PushJobBatch(jobs: Array(jobs[start..<end])).encodedJSON()
                messages.append(AMQPOutboundMessage(exchange: QueueNames.pushExchange, routingKey: provider.rawValue, body: body))
                start = end
            }
        }
        return PushJobMessages(messages: messages, jobsPerProvider: jobsByProvider.mapValues(\.count))
    }
}

/// The messages carrying push jobs, and how many jobs each provider got (counted once published).
private struct PushJobMessages {
    var messages: [AMQPOutboundMessage]
    var jobsPerProvider: [Platform: Int]

    /// Adds the jobs to `notify_push_jobs_total{provider}`.
    func count() {
        for (provider, jobs) in jobsPerProvider {
            Counter(label: "notify_push_jobs_total", dimensions: [("provider", provider.rawValue)]).increment(by: jobs)
        }
    }
}
