import Foundation
import NotifyAMQP
import NotifyModels
import NotifyTestSupport
import NotifyWire
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
                        INSERT INTO delivery_records (app_id, notification_id, record_key, recorded_at, push_ids, attempts, results,
                                                      subscription_ids, sequences, platforms, statuses, reasons, ats)
                        VALUES (\(appId), \(UUID()), \(pushId), \(at), ARRAY[\(pushId)], '{0}', '{accepted}',
                                ARRAY[\(UUID())], '{1}', '{apns}', '{0}', '{""}', ARRAY[\(at)])
                        """, logger: testLogger)
                }
            }
            let purge = StorageCommand(action: .purgeTombstones(olderThan: Date().addingTimeInterval(-30 * 86400)))
            try await withPublisher(try Broker.configuration(), logger: testLogger) { publisher in
                try await publisher.publish(StorageCommandBatch.messages(for: [purge]))
            }
            try await Database.withClient { client in
                _ = try await Database.waitForInteger("SELECT count(*) FROM delivery_records WHERE record_key = \(old)", on: client) { $0 == 0 }
                #expect(try await Database.integer("SELECT count(*) FROM delivery_records WHERE record_key = \(recent)", on: client) == 1)
            }
        }
    }
}
