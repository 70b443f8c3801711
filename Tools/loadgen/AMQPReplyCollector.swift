import Foundation
import Histogram
import NotifyAMQP
import NotifyRuntime
import Synchronization

/// Consumes the replies ingest sends to `reply_to` (a queue of the app's broker user, `<user>.reply.*`) while loadgen
/// publishes over AMQP: each reply is matched by correlation id to when its message was published, so the report
/// has what an app server waiting for the verdict sees (answered/s, statuses, publish → reply latency), beside the
/// broker's confirms.
final class AMQPReplyCollector: Sendable {
    /// What the replies said, for the report.
    struct Summary: Codable, Sendable {
        var answered: Int
        var byStatus: [String: Int]
        /// Answers over the time from the first publish to the last answer.
        var answeredPerSecond: Double
        var latencyMs: LatencyStats
    }

    let queue: String
    private struct State {
        var publishedAt: [String: ContinuousClock.Instant] = [:]
        var firstPublish: ContinuousClock.Instant?
        var lastAnswer: ContinuousClock.Instant?
        var byStatus: [String: Int] = [:]
        /// Each answered message's `x-notify-status`, by correlation id.
        var statusOf: [String: Int] = [:]
        var latency = LatencyStats.histogram()
    }
    private let state = Mutex(State())

    init(queue: String) {
        self.queue = queue
    }

    /// The consumer's topology: a transient queue, gone with the consumer.
    var topology: AMQPTopology {
        AMQPTopology(queues: [.init(name: queue, deadLetterQueue: nil, deliveryLimit: nil, durable: false)])
    }

    /// Called just before the message of `correlationId` is published.
    func published(_ correlationId: String) {
        let now = ContinuousClock.now
        state.withLock { state in
            state.publishedAt[correlationId] = now
            if state.firstPublish == nil { state.firstPublish = now }
        }
    }

    /// The consumer's handler: records every reply and acks it.
    func handle(_ deliveries: [AMQPDelivery]) -> [AMQPDisposition] {
        let now = ContinuousClock.now
        state.withLock { state in
            for delivery in deliveries {
                let status = delivery.properties.headers["x-notify-status"].map { "\($0)" } ?? "none"
                state.byStatus[status, default: 0] += 1
                if let id = delivery.properties.correlationId, let code = delivery.properties.headers["x-notify-status"]?.integerValue {
                    state.statusOf[id] = Int(code)
                }
                if let id = delivery.properties.correlationId, let published = state.publishedAt.removeValue(forKey: id) {
                    state.latency.record(LatencyStats.microseconds(now - published))
                }
            }
            state.lastAnswer = now
        }
        return deliveries.map { _ in .ack }
    }

    /// Waits up to `timeout` until `expected` replies arrived.
    func waitForAnswers(_ expected: Int, timeout: Duration) async {
        let deadline = ContinuousClock.now + timeout
        while answered < expected, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(50))
        }
    }

    var answered: Int { state.withLock { $0.byStatus.values.reduce(0, +) } }

    /// The `x-notify-status` ingest answered the message of `correlationId`, if an answer came.
    func status(of correlationId: String) -> Int? { state.withLock { $0.statusOf[correlationId] } }

    var summary: Summary {
        state.withLock { state in
            let answered = state.byStatus.values.reduce(0, +)
            let span = state.firstPublish.flatMap { first in state.lastAnswer.map { first.duration(to: $0) } } ?? .zero
            let seconds = span.inSeconds
            return Summary(
                answered: answered, byStatus: state.byStatus, answeredPerSecond: Double(answered) / Swift.max(seconds, 0.001),
                latencyMs: LatencyStats(state.latency))
        }
    }
}

extension Publisher.Outcome {
    /// The outcome with each broker-confirmed message's verdict from `replies`: one ingest refused (429, …) is no
    /// longer accepted; one without a verdict stays accepted (confirmed by the broker, so a loss if never delivered).
    func withVerdicts(of replies: AMQPReplyCollector) -> Publisher.Outcome {
        var outcome = self
        for seq in outcome.statuses.indices where outcome.statuses[seq] == 202 {
            guard let status = replies.status(of: String(seq)), status != 202 else { continue }
            outcome.statuses[seq] = Int16(clamping: status)
            outcome.ids[seq] = nil
            outcome.acceptedAt[seq] = nil
        }
        return outcome
    }
}
