import Logging
import NotifyAMQP
import NotifyModels
import NotifyWire
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
        var followers: [CheckedContinuation<Turn, Never>] = []
        let timer: Task<Void, Never>
    }

    /// What a reporter is woken for: its group was published (with this result), or it leads a new group.
    private enum Turn {
        case reported(Bool)
        case lead(after: Task<Void, Never>)
    }

    /// Outcomes in one feedback message at most (about 300 bytes each in JSON).
    static let maximumOutcomes = 5000

    private let publisher: any MessagePublisher
    private let interval: Duration
    private let maximumDeliveries: Int
    private let logger: Logger
    private let gathering = Mutex<Group?>(nil)

    /// - Parameter maximumDeliveries: publish without waiting out the interval once this many push-job messages
    ///   wait for their outcomes (below the consumer's prefetch, which would otherwise stall until the interval ends).
    init(publisher: some MessagePublisher, interval: Duration, maximumDeliveries: Int, logger: Logger) {
        self.publisher = publisher
        self.interval = interval
        self.maximumDeliveries = max(maximumDeliveries, 1)
        self.logger = logger
    }

    /// Returns once the outcomes are confirmed by the broker (true), or false when shutdown began first.
    func report(_ outcomes: [PushOutcome], deliveries: Int) async -> Bool {
        let turn = await withCheckedContinuation { (continuation: CheckedContinuation<Turn, Never>) in
            let leaderTimer = gathering.withLock { group -> Task<Void, Never>? in
                var leaderTimer: Task<Void, Never>?
                if group == nil {
                    let interval = interval
                    let timer = Task<Void, Never> { try? await Task.sleep(for: interval) }
                    group = Group(outcomes: outcomes, deliveries: deliveries, timer: timer)
                    leaderTimer = timer
                } else {
                    group!.outcomes += outcomes
                    group!.deliveries += deliveries
                    group!.followers.append(continuation)
                }
                if group!.deliveries >= maximumDeliveries || group!.outcomes.count >= Self.maximumOutcomes {
                    group!.timer.cancel()
                }
                return leaderTimer
            }
            if let leaderTimer { continuation.resume(returning: .lead(after: leaderTimer)) }
        }
        switch turn {
        case .reported(let confirmed): return confirmed
        case .lead(let timer): return await lead(after: timer)
        }
    }

    /// Waits for the timer (cancelled early when the group fills), then publishes the group and answers its followers.
    private func lead(after timer: Task<Void, Never>) async -> Bool {
        await withTaskCancellationHandler { await timer.value } onCancel: { timer.cancel() }
        let group = gathering.withLock { group in
            defer { group = nil }
            return group!
        }
        let message = AMQPOutboundMessage(routingKey: QueueNames.pushFeedback, wire: PushOutcomeBatch(outcomes: group.outcomes))
        let done = await RetryUntilShutdown.succeeded("publish push outcomes", logger: logger) {
            try await publisher.publish(message)
        }
        for follower in group.followers { follower.resume(returning: .reported(done)) }
        return done
    }
}
