import Foundation
import NotifyModels
import PostgresNIO
import Testing

@testable import NotifyStore

/// Apps and their settings read from PostgreSQL, the rows written by storage's command applier.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["NOTIFY_TEST_STACK"] != nil, "needs PostgreSQL: run deploy/local/test.sh"))
struct PostgresAppStoreTests {
    private static let logger = NotifyStoreTestDatabase.logger

    @Test("an app's credentials, listing, keys, provider secret, broker users, badge, poll source and webhook as stored; gone once deleted")
    func appsAsStored() async throws {
        try await NotifyStoreTestDatabase.withDatabase { client, applier in
            let store = PostgresAppStore(client: client, logger: Self.logger)
            let appId = "apps_\(UUID().lowercasedString.prefix(12))"
            let user = "\(appId).broker"
            _ = try await applier.apply([
                StorageCommand(action: .createApp(AppRecord(
                    appId: appId, name: "Shop", apiKeyHash: "hash-1", clientSigningKey: "sealed-1", brokerUser: nil, createdAt: Date(), badgeMode: .external))),
                StorageCommand(action: .setProviderCredentials(appId: appId, provider: .fcm, appPackage: "", sealedCredentials: "sealed-fcm")),
                StorageCommand(action: .putBrokerUser(BrokerUserRecord(appId: appId, user: user, createdAt: Date(), retiresAt: nil, passwordHash: "h"))),
                StorageCommand(action: .putAPIKey(APIKeyRecord(appId: appId, keyId: "k1", keyHash: "key-hash-1", scope: .publish, name: "one", createdAt: Date()))),
                StorageCommand(action: .setRateLimit(appId: appId, RateLimit(requestsPerSecond: 10, notificationsPerSecond: nil))),
                StorageCommand(action: .setExternalBadge(appId: appId, userId: "alice", badge: 4, at: Date())),
                StorageCommand(action: .putPollSource(PollSourceRecord(
                    appId: appId, name: "feed", url: "https://8.8.8.8/feed", intervalSeconds: 60, authorization: "sealed-auth", createdAt: Date()))),
                StorageCommand(action: .putWebhook(WebhookRecord(
                    appId: appId, url: "https://8.8.8.8/hook", events: ["subscription.created"], secret: "sealed-secret", createdAt: Date()))),
            ])
            _ = try await applier.apply([StorageCommand(action: .rotateAppKeys(AppKeyRotation(
                appId: appId, apiKeyHash: "hash-2", clientSigningKey: nil, retiresAt: Date().addingTimeInterval(60))))])

            let credentials = try #require(try await store.credentials(appId: appId))
            #expect(credentials.apiKeyHash == "hash-2" && credentials.previousAPIKeyHash?.hash == "hash-1")
            #expect(credentials.sealedClientSigningKey == "sealed-1" && credentials.badgeMode == .external)
            #expect(credentials.rateLimit.requestsPerSecond == 10 && credentials.brokerUsers.keys.sorted() == [user])
            #expect(credentials.scopedKeys["key-hash-1"]?.keyId == "k1")
            #expect(try await store.credentials(appId: "no_such_app") == nil)

            let view = try #require(try await store.apps(after: nil, limit: 1, appId: appId).first)
            #expect(view.name == "Shop" && view.providers.map(\.provider) == ["fcm"] && view.brokerUsers.map(\.user) == [user])
            #expect(view.previousApiKeyRetiresAt != nil)
            #expect(try await store.apps(after: appId, limit: 10, appId: appId).isEmpty)

            #expect(try await store.providerSecret(appId: appId, provider: "fcm", appPackage: "") == "sealed-fcm")
            #expect(try await store.providerSecret(appId: appId, provider: "fcm", appPackage: "com.other") == nil)
            #expect(try await store.isProvisioned(brokerUser: user) == false, "storage has not created it in RabbitMQ yet")
            try await client.query("UPDATE app_broker_users SET provisioned_at = now() WHERE user_name = \(user)", logger: Self.logger)
            #expect(try await store.isProvisioned(brokerUser: user))

            _ = try await applier.apply([StorageCommand(action: .revokeAPIKey(appId: appId, keyId: "k1", at: Date()))])
            #expect(try await store.apiKeys(appId: appId, keyId: nil).map { [$0.keyId, $0.revokedAt == nil ? "live" : "revoked"] } == [["k1", "revoked"]])
            #expect(try await store.credentials(appId: appId)?.scopedKeys.isEmpty == true)

            #expect(try await store.externalBadge(appId: appId, userId: "alice") == 4)
            #expect(try await store.externalBadge(appId: appId, userId: "bob") == nil)
            #expect(try await store.pollSources(appId: appId, named: nil).map { [$0.name, $0.url] } == [["feed", "https://8.8.8.8/feed"]])
            #expect(try await store.pollSources(appId: appId, named: "feed").first?.hasAuthorization == true)
            let polled = try await store.allPollSources().filter { $0.appId == appId }
            #expect(polled.map { [$0.name, $0.authorization] } == [["feed", "sealed-auth"]], "answered sealed, as stored")
            let item = UUID()
            #expect(try await store.pollLedger(appId: appId, source: "feed").isEmpty)
            try await client.query(
                """
                INSERT INTO poll_items (app_id, source, notification_id, app_notification_id, digest, updated_at)
                VALUES (\(appId), 'feed', \(item), 'order-1', 'digest-1', now())
                """, logger: Self.logger)
            #expect(try await store.pollLedger(appId: appId, source: "feed") == [item: "digest-1"])
            #expect(try await store.webhook(appId: appId) == StoredWebhook(url: "https://8.8.8.8/hook", events: [.subscriptionCreated], sealedSecret: "sealed-secret"))

            let event = UUID()
            try await client.query(
                """
                INSERT INTO webhook_deliveries (event_id, attempt, app_id, type, status, result, reason, at)
                VALUES (\(event), 1, \(appId), 'subscription.created', 503, 'retrying', 'HTTP 503', now() - interval '1 second'),
                       (\(event), 2, \(appId), 'subscription.created', 0, 'delivered', '', now())
                """, logger: Self.logger)
            let attempts = try await store.webhookAttempts(appId: appId, limit: 10)
            #expect(attempts.map(\.attempt) == [2, 1] && attempts.first?.status == nil && attempts.last?.reason == "HTTP 503")

            #expect(try await store.isGone(appId: appId) == false)
            _ = try await applier.apply([StorageCommand(action: .deleteApp(appId: appId))])
            #expect(try await store.credentials(appId: appId) == nil)
            #expect(try await store.isGone(appId: appId) == false, "its broker user is retired, not yet deleted from RabbitMQ")
            try await client.query("DELETE FROM app_broker_users WHERE user_name = \(user)", logger: Self.logger)
            #expect(try await store.isGone(appId: appId))
        }
    }
}
