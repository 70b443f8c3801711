import NotifyAMQP
import Synchronization

/// A publisher that confirms every publish at once and keeps what it was given, call by call (handing each call's
/// messages to `whenConfirmed`, e.g. to play the consumer's part); or, made `refusing`, one that fails every publish
/// with that error (as a publisher whose broker is down does) and counts the attempts.
public final class RecordingPublisher: MessagePublisher {
    private struct State {
        var confirmed: [[AMQPOutboundMessage]] = []
        var refused = 0
    }

    private let refusal: AMQPError?
    private let whenConfirmed: (@Sendable ([AMQPOutboundMessage]) -> Void)?
    private let state = Mutex(State())

    public init(refusing refusal: AMQPError? = nil, whenConfirmed: (@Sendable ([AMQPOutboundMessage]) -> Void)? = nil) {
        self.refusal = refusal
        self.whenConfirmed = whenConfirmed
    }

    /// Every message published, in order.
    public var all: [AMQPOutboundMessage] { state.withLock { $0.confirmed.flatMap { $0 } } }

    /// The messages of each call, in order (one call: one confirmed publish).
    public var publishes: [[AMQPOutboundMessage]] { state.withLock { $0.confirmed } }

    /// How many publishes were refused.
    public var refusedCount: Int { state.withLock { $0.refused } }

    public func publish(_ messages: [AMQPOutboundMessage]) async throws {
        if let refusal {
            state.withLock { $0.refused += 1 }
            throw refusal
        }
        state.withLock { $0.confirmed.append(messages) }
        whenConfirmed?(messages)
    }
}
