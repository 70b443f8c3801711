import Foundation
import NotifyAMQP
import NotifyModels
import PostgresNIO
import Testing

extension EndToEndTests {
    @Suite("retention")
    struct RetentionTests {
        @Test("a purge forgets delivery-log rows older than the retention and keeps newer ones")
        func purgeForgetsOldDeliveryLog() async throws {
            let appId = "retention-\(uniqueSuffix())"
            let old = UUID(), recent = UUID()
            try await Database.withClient { client in
                for (pushId, daysAgo) in [(old, 40.0), (recent, 1.0)] {
                    let at = Date().addingTimeInterval(-daysAgo * 86400)
                    try await client.query(
                        """
                        INSERT INTO delivery_log (push_id, attempt, result, app_id, notification_id, subscription_id, sequence, platform, at)
                        VALUES (\(pushId), 0, 'accepted', \(appId), \(UUID()), \(UUID()), 1, 'apns', \(at))
                        """, logger: testLogger)
                }
            }
            let purge = StorageCommand(action: .purgeTombstones(olderThan: Date().addingTimeInterval(-30 * 86400)))
            try await Broker.withPublisher(try Broker.configuration()) { publisher in
                try await publisher.publish(AMQPOutboundMessage(
                    routingKey: QueueNames.storageCommands, body: try WireCoding.makeEncoder().encode(StorageCommandBatch(commands: [purge]))))
            }
            try await Database.withClient { client in
                _ = try await Database.waitForInteger("SELECT count(*) FROM delivery_log WHERE push_id = \(old)", on: client) { $0 == 0 }
                #expect(try await Database.integer("SELECT count(*) FROM delivery_log WHERE push_id = \(recent)", on: client) == 1)
            }
        }
    }
}
