import Logging
import NotifyAMQP
import NotifyBrokerAdmin
import NotifyModels
import NotifyRuntime
import ServiceLifecycle

/// The bounds of the ingest dead-letter queue (`notify.ingest.dead`): RabbitMQ refuses a copy beyond them
/// (`overflow: reject-publish`, the oldest kept), and ingest's consumer counts the copies it could not keep
/// (`notify_dead_letters_dropped_total`).
struct DeadLetterBounds: Sendable, Equatable {
    var maximumMessages: Int
    var maximumBytes: Int
    var maximumAge: Duration
}

/// Bounds `notify.ingest.dead` with a RabbitMQ policy (which changes the existing queue's limits without declaring it
/// again), set when storage starts and tried again every few seconds until the management API takes it. Every storage
/// instance may set it: the policy is the same.
struct IngestDeadLetterPolicy: Service {
    let administration: any BrokerAdministration
    let bounds: DeadLetterBounds
    let logger: Logger

    /// The policy for `notify.ingest.dead`.
    var policy: BrokerPolicy {
        .forQueue(
            AMQPTopology.deadLetterQueue(of: QueueNames.ingestQueue), name: "notify-ingest-dead",
            definition: [
                "max-length": .integer(bounds.maximumMessages), "max-length-bytes": .integer(bounds.maximumBytes),
                "overflow": .string("reject-publish"),
                "message-ttl": .integer(Int(bounds.maximumAge.components.seconds) * 1000),
            ])
    }

    /// Sets the policy, then waits for shutdown.
    func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                try await administration.putPolicy(policy)
                break
            } catch {
                logger.warning("could not bound notify.ingest.dead yet; will try again", metadata: ["error": "\(error)"])
                await pauseUnlessShuttingDown(for: .seconds(5))
            }
        }
        try? await gracefulShutdown()
    }
}
