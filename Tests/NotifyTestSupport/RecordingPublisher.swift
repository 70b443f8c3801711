import NotifyAMQP
import Synchronization

/// A publisher that confirms every publish at once and keeps what it was given, call by call.
public final class RecordingPublisher: MessagePublisher {
    private let calls = Mutex<[[AMQPOutboundMessage]]>([])

    public init() {}

    /// Every message published, in order.
    public var all: [AMQPOutboundMessage] { calls.withLock { $0.flatMap { $0 } } }

    /// The messages of each call, in order (one call: one confirmed publish).
    public var publishes: [[AMQPOutboundMessage]] { calls.withLock { $0 } }

    public func publish(_ messages: [AMQPOutboundMessage]) async throws {
        calls.withLock { $0.append(messages) }
    }
}
