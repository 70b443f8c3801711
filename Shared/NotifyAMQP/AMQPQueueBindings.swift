import Logging
import ServiceLifecycle

/// Binds and unbinds queues while a service runs (queue.bind and queue.unbind), on a connection of its own owned by a
/// dedicated thread: for routing that follows what the service holds (ingest binds its live queue only while it holds
/// live streams).
///
/// No management API is needed: the connection's user needs only what AMQP asks of a binding (write permission on the
/// queue, read permission on the exchange). While the broker is unreachable a call fails at once with `.notConnected`,
/// and the thread reconnects with backoff.
public final class AMQPQueueBindings: Service, Sendable {
    private let connection: OnDemandConnection

    public init(configuration: AMQPConfiguration, logger: Logger) {
        connection = OnDemandConnection(configuration: configuration, logger: logger, role: "queue binder", threadName: "amqp-bindings")
    }

    /// Whether the connection is up.
    public var isConnected: Bool { connection.isConnected }

    /// Binds `binding.queue` to `binding.exchange` (binding it again changes nothing). Throws `AMQPError`: `.refused`
    /// when the queue or the exchange does not exist or the user may not bind them.
    public func bind(_ binding: AMQPTopology.Binding) async throws {
        try await connection.perform { wire throws(AMQPError) in try wire.bind(binding) }
    }

    /// Takes `binding` away; a binding that does not exist (nor its queue or exchange) is not an error. Throws `AMQPError`.
    public func unbind(_ binding: AMQPTopology.Binding) async throws {
        try await connection.perform { wire throws(AMQPError) in try wire.unbind(binding) }
    }

    /// Connects and makes the calls asked until graceful shutdown.
    public func run() async throws {
        await connection.run()
    }
}
