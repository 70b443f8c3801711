import Foundation
import Logging
import NotifyModels
import PostgresNIO
import Testing

@testable import NotifyStore

/// A push token registered by another user, applied in-process against the test stack's PostgreSQL: what stays of
/// the previous user's subscription (nothing), and what a replacement may take across users (nothing).
@Suite(.enabled(if: ProcessInfo.processInfo.environment["NOTIFY_TEST_STACK"] != nil, "needs PostgreSQL: run deploy/local/test.sh"))
struct TokenReassignmentTests {
    private let logger = Logger(label: "token-reassignment-tests")

    /// A new app with the open source `news` and the app-server source `alerts`.
    private func makeApp(_ applier: CommandBatchApplier) async throws -> String {
        let appId = "core_\(UUID().lowercasedString.prefix(12))"
        _ = try await applier.apply([
            StorageCommand(action: .createApp(AppRecord(
                appId: appId, name: "reassignment test", apiKeyHash: UUID().lowercasedString, clientSigningKey: "key", brokerUser: nil, createdAt: Date()))),
            StorageCommand(action: .putEventSource(EventSourceRecord(appId: appId, name: "news", policy: .open, description: nil, createdAt: Date()))),
            StorageCommand(action: .putEventSource(EventSourceRecord(appId: appId, name: "alerts", policy: .appServer, description: nil, createdAt: Date()))),
        ])
        return appId
    }

    private func registration(
        appId: String, userId: String, token: String, id: UUID = UUID(), replaces: UUID? = nil
    ) -> StorageCommand {
        StorageCommand(action: .registerSubscription(DeviceSubscription(
            subscriptionId: id, appId: appId, userId: userId, platform: .apns, pushToken: token, appPackage: nil, displayName: nil,
            expirationDateTime: Date().addingTimeInterval(86400), registeredAt: Date(), replacesSubscriptionId: replaces)))
    }

    /// Each subscription of the app: its user, synced position and event sources, by id.
    private func subscriptions(of appId: String, on client: PostgresClient) async throws -> [UUID: (user: String, synced: Int64?, sources: [String])] {
        let rows = try await client.query(
            """
            SELECT s.subscription_id, s.user_id, s.synced_sequence,
                   coalesce(array_agg(m.event_source ORDER BY m.event_source) FILTER (WHERE m.event_source IS NOT NULL), '{}')
            FROM subscriptions s LEFT JOIN event_source_members m ON m.subscription_id = s.subscription_id
            WHERE s.app_id = \(appId) GROUP BY s.subscription_id
            """, logger: logger)
        var found: [UUID: (user: String, synced: Int64?, sources: [String])] = [:]
        for try await (id, user, synced, sources) in rows.decode((UUID, String, Int64?, [String]).self) { found[id] = (user, synced, sources) }
        return found
    }

    private func devicesVersion(appId: String, userId: String, on client: PostgresClient) async throws -> Int64 {
        let rows = try await client.query(
            "SELECT coalesce((SELECT version FROM device_versions WHERE app_id = \(appId) AND user_id = \(userId)), 0)::int8", logger: logger)
        for try await version in rows.decode(Int64.self) { return version }
        return 0
    }

    @Test("a token registered by another user becomes a new subscription of that user: no event source, no synced position; the previous one is gone and both users' devices versions rise")
    func tokenChangingHandsStartsClean() async throws {
        try await NotifyStoreTestDatabase.withDatabase { client, applier in
            let appId = try await makeApp(applier)
            let token = UUID().lowercasedString
            let previous = UUID()
            _ = try await applier.apply([
                registration(appId: appId, userId: "ana", token: token, id: previous),
                StorageCommand(action: .joinEventSource(appId: appId, name: "news", subscriptionIds: [previous])),
                StorageCommand(action: .joinEventSource(appId: appId, name: "alerts", subscriptionIds: [previous])),
                StorageCommand(action: .recordDeviceSync(appId: appId, userId: "ana", subscriptionId: previous, sequence: 5)),
            ])
            #expect(try await subscriptions(of: appId, on: client)[previous]?.sources == ["alerts", "news"])
            let before = (ana: try await devicesVersion(appId: appId, userId: "ana", on: client),
                          ben: try await devicesVersion(appId: appId, userId: "ben", on: client))

            // An ingest that looked the token up before it changed hands names the previous id: it is not reused.
            _ = try await applier.apply([registration(appId: appId, userId: "ben", token: token, id: previous)])
            let stored = try await subscriptions(of: appId, on: client)
            #expect(stored.count == 1, "one subscription holds the token")
            let (id, taken) = try #require(stored.first)
            #expect(id != previous, "a new subscription id")
            #expect(taken.user == "ben" && taken.sources.isEmpty && taken.synced == nil, "no event source, no synced position: \(taken)")
            #expect(try await devicesVersion(appId: appId, userId: "ana", on: client) > before.ana, "the previous user's devices changed")
            #expect(try await devicesVersion(appId: appId, userId: "ben", on: client) > before.ben, "the new user's devices changed")

            // The same user registering the token again keeps the subscription.
            _ = try await applier.apply([registration(appId: appId, userId: "ben", token: token)])
            #expect(try await subscriptions(of: appId, on: client).keys.sorted() == [id])
            _ = try await applier.apply([StorageCommand(action: .deleteApp(appId: appId))])
        }
    }

    @Test("a registration that names another user's subscription as the one it replaces takes nothing from it")
    func replacingAcrossUsersTakesNothing() async throws {
        try await NotifyStoreTestDatabase.withDatabase { client, applier in
            let appId = try await makeApp(applier)
            let anas = UUID()
            _ = try await applier.apply([
                registration(appId: appId, userId: "ana", token: UUID().lowercasedString, id: anas),
                StorageCommand(action: .joinEventSource(appId: appId, name: "alerts", subscriptionIds: [anas])),
            ])
            let bens = UUID()
            _ = try await applier.apply([registration(appId: appId, userId: "ben", token: UUID().lowercasedString, id: bens, replaces: anas)])
            let stored = try await subscriptions(of: appId, on: client)
            #expect(stored[anas]?.user == "ana" && stored[anas]?.sources == ["alerts"], "the other user's subscription stays as it was")
            #expect(stored[bens]?.user == "ben" && stored[bens]?.sources == [], "nothing moved across")
            _ = try await applier.apply([StorageCommand(action: .deleteApp(appId: appId))])
        }
    }
}
