import Foundation
import NotifyModels
import PostgresNIO
import Testing

@testable import NotifyStore

/// What storage's relay and provisioner read and mark, against PostgreSQL: the webhook outbox and attempts log, and
/// apps' broker users waiting to be created or deleted.
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["NOTIFY_TEST_STACK"] != nil, "needs PostgreSQL: run deploy/local/test.sh"))
struct StorageOutboxStoreTests {
    private static let logger = NotifyStoreTestDatabase.logger

    private static func app(_ appId: String) -> StorageCommand {
        StorageCommand(action: .createApp(AppRecord(
            appId: appId, name: "outbox", apiKeyHash: UUID().lowercasedString, clientSigningKey: "key", brokerUser: nil, createdAt: Date())))
    }

    @Test("the webhook outbox is relayed oldest first and marked only when the relay succeeded; attempts are logged once")
    func webhookOutbox() async throws {
        try await NotifyStoreTestDatabase.withDatabase { client, _ in
            let store = WebhookEventStore(client: client, logger: Self.logger)
            let appId = "outbox_\(UUID().lowercasedString.prefix(12))"
            // Recorded without an announcement, so the test stack's own relay (which also looks every 5 s) leaves them be
            // for now; only this app's events are looked at.
            let events = (0..<3).map { _ in UUID() }
            for event in events {
                try await client.query(
                    """
                    INSERT INTO webhook_events (event_id, app_id, type, data, created_at)
                    VALUES (\(event), \(appId), 'subscription.created', '{"userId":"alice"}', now())
                    """, logger: Self.logger)
            }
            struct RelayFailed: Error {}
            var offered: [UUID] = []
            await #expect(throws: (any Error).self, "the relay's failure rolls the transaction back") {
                _ = try await store.relayOldest(limit: 10_000) { deliveries in
                    offered = deliveries.filter { $0.appId == appId }.map(\.eventId)
                    throw RelayFailed()
                }
            }
            #expect(offered == events, "oldest first")
            var relayed: [UUID] = []
            _ = try await store.relayOldest(limit: 10_000) { deliveries in relayed = deliveries.filter { $0.appId == appId }.map(\.eventId) }
            #expect(relayed == events, "a failed relay marked nothing")
            _ = try await store.relayOldest(limit: 10_000) { deliveries in
                #expect(!deliveries.contains { $0.appId == appId }, "relayed events are not offered again")
            }

            let event = UUID()
            let attempt = WebhookAttempt(
                eventId: event, appId: appId, type: "subscription.created", attempt: 1, status: 503, result: "retrying", reason: "HTTP 503",
                at: Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down)))
            try await store.recordAttempts([attempt, attempt])
            try await store.recordAttempts([attempt])
            let logged = try await PostgresAppStore(client: client, logger: Self.logger).webhookAttempts(appId: appId, limit: 10)
            #expect(logged == [attempt])
        }
    }

    @Test("a broker user is pending until marked provisioned (not when its row is gone), and retired users are listed until forgotten")
    func brokerUsers() async throws {
        try await NotifyStoreTestDatabase.withDatabase { client, applier in
            let store = BrokerUserStore(client: client, logger: Self.logger)
            let appId = "brokers_\(UUID().lowercasedString.prefix(12))"
            let user = "\(appId).new"
            _ = try await applier.apply([
                Self.app(appId),
                StorageCommand(action: .putBrokerUser(BrokerUserRecord(appId: appId, user: user, createdAt: Date(), retiresAt: nil, passwordHash: "hash"))),
            ])
            #expect(try await store.pending(limit: 10_000).contains(BrokerUserStore.Pending(user: user, appId: appId, passwordHash: "hash")))
            #expect(try await store.markProvisioned(user))
            #expect(try await !store.pending(limit: 10_000).contains { $0.user == user })
            #expect(try await store.markProvisioned("\(appId).never-recorded") == false)

            _ = try await applier.apply([StorageCommand(action: .putBrokerUser(BrokerUserRecord(
                appId: appId, user: user, createdAt: Date(), retiresAt: Date().addingTimeInterval(-1))))])
            #expect(try await store.retired(limit: 10_000).contains { $0.user == user && $0.appId == appId })
            try await store.forgetRetired(user)
            #expect(try await !store.retired(limit: 10_000).contains { $0.user == user })
        }
    }
}

