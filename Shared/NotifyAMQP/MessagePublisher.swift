/// Publishes messages and returns once the broker confirmed them all: `AMQPPublisher`, or in tests a recorder.
public protocol MessagePublisher: Sendable {
    /// Publishes the messages and waits for the broker's confirms. Throws `AMQPError`.
    func publish(_ messages: [AMQPOutboundMessage]) async throws
}

extension MessagePublisher {
    /// Publishes one message and waits for the broker's confirm.
    public func publish(_ message: AMQPOutboundMessage) async throws {
        try await publish([message])
    }
}
