import Logging
import ServiceLifecycle

/// Reads how many messages are ready in queues, with passive declares (nothing is created), on a connection of its own
/// owned by a dedicated thread.
///
/// The broker answers from the queue itself, so a figure is current (its management API lists queues from statistics
/// refreshed every `collect_statistics_interval`, 5 s by default), and no management API is needed. For the broker a
/// passive declare of a quorum queue is not cheap: six of them a second cost an idle RabbitMQ 3.10 about as much CPU as
/// one listing of the management API a second, 2-4 ms (docs/benchmarks-history.md, "2026-11-25, 2acc630 and 0d1421f"). While the broker is
/// unreachable, `depths` fails at once with `.notConnected`, and the thread reconnects with backoff.
public final class AMQPQueueDepths: Service, Sendable {
    private let connection: OnDemandConnection

    public init(configuration: AMQPConfiguration, logger: Logger) {
        connection = OnDemandConnection(configuration: configuration, logger: logger, role: "queue-depth reader", threadName: "amqp-depths")
    }

    /// Whether the connection is up.
    public var isConnected: Bool { connection.isConnected }

    /// The messages ready in each of `queues` that exists (a missing queue is left out). Throws `AMQPError`.
    public func depths(of queues: [String]) async throws -> [String: Int] {
        try await connection.perform { wire throws(AMQPError) in
            var depths: [String: Int] = [:]
            for queue in queues {
                if let counts = try wire.counts(of: queue) { depths[queue] = counts.messages }
            }
            return depths
        }
    }

    /// The consumers of `queue` (nil when there is no such queue). Throws `AMQPError`.
    public func consumers(of queue: String) async throws -> Int? {
        try await connection.perform { wire throws(AMQPError) in try wire.counts(of: queue)?.consumers }
    }

    /// Connects and answers reads until graceful shutdown.
    public func run() async throws {
        await connection.run()
    }
}
