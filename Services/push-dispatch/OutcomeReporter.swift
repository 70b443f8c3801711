import Logging
import NotifyAMQP
import NotifyModels
import NotifyRuntime
import Synchronization

/// Puts push outcomes on `push.feedback` in groups: the outcomes of every batch handled within `interval` go out
/// as one message with one confirm, sooner once `maximumDeliveries` push-job messages wait for them.
///
/// Feedback is not on the way to the device, so the wait delays no push. What it saves, at moderate rates where
/// each batch is small: a broker message and confirm per batch here, and a consumed message and a transaction
/// per batch in storage. The push-job messages of a batch are acknowledged only once its outcomes are confirmed,
/// so a crash in the wait loses nothing (the jobs come back and are sent again with the same push ids).
final class OutcomeReporter: Sendable {
    /// The outcomes gathering for the next message. The first reporter leads the group: it waits for the interval
    /// (`timer`), publishes, and tells the others how it went.
    private struct Group {
        var outcomes: [PushOutcome]
        var deliveries: Int
        var followers: [CheckedContinuation<Bool?, Never>] = []
        let timer: Task<Void, Never>
    }

    /// Outcomes in one feedback message at most (the message stays well under a megabyte per thousand).
    static let maximumOutcomes = 5000

    private let publisher: AMQPPublisher
    private let interval: Duration
    private let maximumDeliveries: Int
    private let logger: Logger
    private let gathering = Mutex<Group?>(nil)

    /// - Parameter maximumDeliveries: publish without waiting out the interval once this many push-job messages
    ///   wait for their outcomes (below the consumer's prefetch, which would otherwise stall until the interval ends).
    init(publisher: AMQPPublisher, interval: Duration, maximumDeliveries: Int, logger: Logger) {
        self.publisher = publisher
        self.interval = interval
        self.maximumDeliveries = max(maximumDeliveries, 1)
        self.logger = logger
    }

    /// Returns once the outcomes are confirmed by the broker (true), or false when shutdown began first.
    func report(_ outcomes: [PushOutcome], deliveries: Int) async -> Bool {
        let followerResult: Bool? = await withCheckedContinuation { continuation in
            let leads = gathering.withLock { group in
                let leads = group == nil
                if leads {
                    let interval = interval
                    group = Group(outcomes: outcomes, deliveries: deliveries, timer: Task { try? await Task.sleep(for: interval) })
                } else {
                    group!.outcomes += outcomes
                    group!.deliveries += deliveries
                    group!.followers.append(continuation)
                }
                if group!.deliveries >= maximumDeliveries || group!.outcomes.count >= Self.maximumOutcomes {
                    group!.timer.cancel()
                }
                return leads
            }
            if leads { continuation.resume(returning: nil) }
        }
        if let followerResult { return followerResult }
        return await lead()
    }

    private func lead() async -> Bool {
        guard let timer = gathering.withLock({ $0?.timer }) else { return false }
        await withTaskCancellationHandler { await timer.value } onCancel: { timer.cancel() }
        let group = gathering.withLock { group in
            defer { group = nil }
            return group!
        }
        let message = AMQPOutboundMessage(routingKey: QueueNames.pushFeedback, body: PushOutcomeBatch(outcomes: group.outcomes).encodedJSON())
        let done = await RetryUntilShutdown.succeeded("publish push outcomes", logger: logger) {
            try await publisher.publish(message)
        }
        for follower in group.followers { follower.resume(returning: done) }
        return done
    }
}
