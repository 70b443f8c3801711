import Foundation
import Logging
import NotifyAMQP
import NotifyModels
import NotifyRuntime
import NotifyWire
import ServiceLifecycle

/// Periodically asks storage (through its own command queue, so the work is batched, idempotent and
/// emitted at least once like any command) to expire due notifications and to purge old tombstones.
struct Sweeper: Service {
    let publisher: AMQPPublisher
    let expiryInterval: Duration
    let tombstoneRetention: TimeInterval
    let logger: Logger
    private let purgeInterval: Duration = .seconds(3600)

    init(publisher: AMQPPublisher, expiryInterval: Duration, tombstoneRetention: TimeInterval, logger: Logger) {
        self.publisher = publisher
        self.expiryInterval = expiryInterval
        self.tombstoneRetention = tombstoneRetention
        self.logger = logger
    }

    func run() async throws {
        var sinceLastPurge = purgeInterval
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            let now = Date()
            var commands = [StorageCommand(issuedAt: now, action: .expireDueNotifications(dueBy: now))]
            if sinceLastPurge >= purgeInterval {
                commands.append(StorageCommand(issuedAt: now, action: .purgeTombstones(olderThan: now.addingTimeInterval(-tombstoneRetention))))
                sinceLastPurge = .zero
            }
            do {
                try await publisher.publish(StorageCommandBatch.messages(for: commands))
            } catch {
                logger.debug("sweep not queued; will try again", metadata: ["error": "\(error)"])
            }
            await pauseUnlessShuttingDown(for: expiryInterval)
            sinceLastPurge += expiryInterval
        }
    }
}
