import Foundation
import Logging
import NotifyAMQP
import NotifyBrokerAdmin
import NotifyModels
import NotifyRuntime
import PostgresNIO
import ServiceLifecycle

/// Keeps the broker as ingest needs it: sets the policy that bounds `notify.ingest.dead` (a policy changes the
/// existing queue's limits without declaring it again), and deletes the broker users whose rotation overlap ended,
/// from RabbitMQ first, then from the app's records. Every instance may do it: each step is idempotent.
struct BrokerMaintenance: Service {
    let administration: any BrokerAdministration
    let bounds: DeadLetterBounds
    let database: PostgresClient
    let sender: CommandSender
    let interval: Duration
    let logger: Logger

    /// The policy for `notify.ingest.dead`.
    static func deadLetterPolicy(_ bounds: DeadLetterBounds) -> BrokerPolicy {
        .forQueue(
            AMQPTopology.deadLetterQueue(of: QueueNames.ingestQueue), name: "notify-ingest-dead",
            definition: [
                "max-length": .integer(bounds.maximumMessages), "max-length-bytes": .integer(bounds.maximumBytes),
                "overflow": .string("reject-publish"),
                "message-ttl": .integer(Int(bounds.maximumAge.components.seconds) * 1000),
            ])
    }

    func run() async throws {
        var policySet = false
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            if !policySet {
                do {
                    try await administration.putPolicy(Self.deadLetterPolicy(bounds))
                    policySet = true
                } catch {
                    logger.warning("could not bound notify.ingest.dead yet; will try again", metadata: ["error": "\(error)"])
                }
            }
            await deleteRetiredUsers()
            await pauseUnlessShuttingDown(for: interval)
        }
    }

    private func deleteRetiredUsers() async {
        do {
            var retired: [(user: String, appId: String)] = []
            let rows = try await database.query(
                "SELECT user_name, app_id FROM app_broker_users WHERE retires_at <= now() ORDER BY retires_at LIMIT 500", logger: logger)
            for try await row in rows.decode((String, String).self) { retired.append(row) }
            var deleted: [StorageCommand] = []
            for (user, appId) in retired {
                try await administration.deleteUser(user)
                logger.info("deleted a retired broker user", metadata: ["user": "\(user)", "appId": "\(appId)"])
                deleted.append(StorageCommand(action: .deleteBrokerUser(appId: appId, user: user)))
            }
            try await sender.send(deleted)
        } catch {
            logger.warning("could not delete retired broker users; will try again", metadata: ["error": "\(error)"])
        }
    }
}
