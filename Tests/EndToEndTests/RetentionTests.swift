import Foundation
import NotifyAMQP
import NotifyModels
import NotifyStore
import NotifyTestSupport
import NotifyWire
import Testing

extension EndToEndTests {
    @Suite("retention")
    struct RetentionTests {
        @Test("a purge forgets delivery-log rows older than the retention and keeps newer ones")
        func purgeForgetsOldDeliveryLog() async throws {
            let appId = "retention-\(uniqueSuffix())"
            let old = UUID(), recent = UUID()
            // Logged as storage logs a push's outcome, one notification each: 40 days ago and yesterday.
            try await Database.withClient { client in
                let deliveryLog = PostgresDeliveryLogStore(client: client, logger: testLogger)
                for (notificationId, daysAgo) in [(old, 40.0), (recent, 1.0)] {
                    let outcome = PushOutcome(
                        pushId: UUID(), appId: appId, subscriptionId: UUID(), notificationId: notificationId, sequence: 1, platform: .apns,
                        result: .accepted, status: nil, reason: nil, attempt: 0, invalidSince: nil, at: Date().addingTimeInterval(-daysAgo * 86400))
                    _ = try await deliveryLog.record([outcome], keys: [UUID()])
                }
            }
            let purge = StorageCommand(action: .purgeTombstones(olderThan: Date().addingTimeInterval(-30 * 86400)))
            try await withPublisher(try Broker.configuration(), logger: testLogger) { publisher in
                try await publisher.publish(StorageCommandBatch.messages(for: [purge]))
            }
            try await Database.withClient { client in
                let deliveryLog = PostgresDeliveryLogStore(client: client, logger: testLogger)
                func logged(_ notificationId: UUID) async throws -> Int {
                    try await deliveryLog.deliveries(appId: appId, notificationId: notificationId, since: nil, limit: 10, pageToken: nil).deliveries.count
                }
                _ = try await Database.waitFor("the old outcomes logged") { try await logged(old) } until: { $0 == 0 }
                #expect(try await logged(recent) == 1)
            }
        }
    }
}
