import Foundation
import Logging
import NotifyDatabase
import NotifyModels
import NotifyWire
import PostgresNIO
import Testing

@testable import NotifyStore

/// A broadcast's expiry and a user's leaving its source, as storage writes them and a device's sync reads them: the
/// expiry numbered again in the app's broadcast order (one row, whatever the audience), the removal a change of the
/// leaving user's own.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["NOTIFY_TEST_STACK"] != nil, "needs PostgreSQL: run deploy/local/test.sh"))
struct BroadcastChangesTests {
    private let logger = NotifyStoreTestDatabase.logger

    /// An app with users a and b, each with a device in "news" since a minute ago; answers the app id and the devices.
    private func seed(_ applier: CommandBatchApplier, _ client: PostgresClient) async throws -> (appId: String, a: UUID, b: UUID) {
        let appId = "bc_\(UUID().lowercasedString.prefix(12))"
        _ = try await applier.apply([StorageCommand(action: .createApp(AppRecord(
            appId: appId, name: "broadcast changes", apiKeyHash: UUID().lowercasedString, clientSigningKey: "key", brokerUser: nil, createdAt: Date())))])
        let (a, b) = (UUID(), UUID())
        try await client.query(
            """
            WITH added AS (
                INSERT INTO subscriptions (subscription_id, app_id, user_id, platform, push_token, expires_at, registered_at)
                SELECT id, \(appId), u, 'apns', md5(id::text), now() + interval '1 day', now()
                FROM unnest(ARRAY[\(a), \(b)]::uuid[], ARRAY['a', 'b']) AS t(id, u)
                RETURNING subscription_id
            )
            INSERT INTO event_source_members (app_id, event_source, subscription_id, joined_at)
            SELECT \(appId), 'news', subscription_id, now() - interval '1 minute' FROM added
            """, logger: logger)
        return (appId, a, b)
    }

    private func broadcast(_ appId: String, _ id: UUID) -> StorageCommand {
        StoreCommands.broadcast(id, appId: appId)
    }

    private func events(_ applier: CommandBatchApplier, _ commands: [StorageCommand]) async throws -> [ChangeEvent] {
        try ChangeEventBatch(wireBytes: ChangeEventBatch.wireBytes(joining: try await applier.apply(commands).map(\.events))).events
    }

    /// Every change of `user` after `position`, and the position reached.
    private func sync(
        _ store: PostgresNotificationStore, _ appId: String, _ user: String, after position: SyncPosition
    ) async throws -> ([NotificationChange], SyncPosition) {
        let page = try await store.changes(appId: appId, userId: user, after: position, limit: 100, filter: NotificationFilter())
        return (page.changes, try SyncCursor.decode(page.cursor))
    }

    @Test("an expired broadcast is listed once more to every member, expired, after their cursors; the sweep numbers it once, and a replace makes it live again")
    func expiryIsListed() async throws {
        try await NotifyStoreTestDatabase.withDatabase { client, applier in
            let (appId, _, _) = try await seed(applier, client)
            let store = PostgresNotificationStore(client: client, logger: logger)
            let (expiring, staying) = (UUID(), UUID())
            _ = try await applier.apply([broadcast(appId, expiring), broadcast(appId, staying)])
            let (created, aSynced) = try await sync(store, appId, "a", after: SyncPosition())
            #expect(created.map(\.kind) == [.created, .created])
            let (_, bSynced) = try await sync(store, appId, "b", after: SyncPosition())

            #expect(try await events(applier, [StorageCommand(action: .expireDueNotifications(dueBy: Date()))]).isEmpty, "nothing is due yet")
            try await client.query("UPDATE broadcasts SET expires_at = now() - interval '1 second' WHERE notification_id = \(expiring)", logger: logger)
            let expired = try await events(applier, [StorageCommand(action: .expireDueNotifications(dueBy: Date()))])
            #expect(expired.map(\.kind) == [.expired] && expired.map(\.notificationId) == [expiring], "\(expired)")
            #expect(expired.first?.eventSource == "news" && expired.first?.userId == "", "a broadcast's event: fanout streams its audience")
            #expect(try await events(applier, [StorageCommand(action: .expireDueNotifications(dueBy: Date()))]).isEmpty, "numbered twice")

            for (user, position) in [("a", aSynced), ("b", bSynced)] {
                let (changes, reached) = try await sync(store, appId, user, after: position)
                #expect(changes.map(\.kind) == [.expired], "\(user): \(changes)")
                #expect(changes.first?.notification.id == expiring && changes.first?.broadcastSequence == 3)
                #expect(changes.first?.notification.status == .expired)
                #expect(try await sync(store, appId, user, after: reached).0.isEmpty, "\(user): listed again")
            }
            // Replaced with a later expiration, it is live again and expires again in its time.
            _ = try await applier.apply([broadcast(appId, expiring)])
            #expect(try await sync(store, appId, "a", after: aSynced).0.last?.kind == .updated)
            #expect(try await events(applier, [StorageCommand(action: .expireDueNotifications(dueBy: Date()))]).isEmpty)
        }
    }

    @Test("a user whose devices leave the source gets a removed change, in its own sequence, for each broadcast the source put in its feed and it had not deleted; a device that stays keeps the broadcasts from its own join on; the other member is unaffected")
    func leavingRemoves() async throws {
        try await NotifyStoreTestDatabase.withDatabase { client, applier in
            let (appId, a, _) = try await seed(applier, client)
            let store = PostgresNotificationStore(client: client, logger: logger)
            let (first, second, deleted) = (UUID(), UUID(), UUID())
            _ = try await applier.apply([broadcast(appId, first), broadcast(appId, deleted)])
            _ = try await applier.apply([StorageCommand(action: .changeNotificationState(NotificationStateChange(
                appId: appId, userId: "a", notificationId: deleted, readState: nil, userActionState: nil, delete: true,
                originSubscriptionId: nil, requestedAt: Date())))])
            // A second device of a's joins now; then a broadcast both of a's devices are members for.
            let later = UUID()
            try await client.query(
                """
                WITH added AS (
                    INSERT INTO subscriptions (subscription_id, app_id, user_id, platform, push_token, expires_at, registered_at)
                    VALUES (\(later), \(appId), 'a', 'apns', md5(\(later)::text), now() + interval '1 day', now()) RETURNING subscription_id
                )
                INSERT INTO event_source_members (app_id, event_source, subscription_id, joined_at) SELECT \(appId), 'news', subscription_id, now() FROM added
                """, logger: logger)
            _ = try await applier.apply([broadcast(appId, second)])
            let (_, aSynced) = try await sync(store, appId, "a", after: SyncPosition())
            let (_, bSynced) = try await sync(store, appId, "b", after: SyncPosition())

            // The first device leaves: only the broadcast from before the second device joined leaves a's feed.
            let left = try await events(applier, [StorageCommand(action: .leaveEventSource(appId: appId, name: "news", subscriptionIds: [a]))])
            #expect(left.map(\.kind) == [.removed] && left.map(\.notificationId) == [first] && left.map(\.userId) == ["a"], "\(left)")
            #expect(left.first?.eventSource == nil && left.first?.sequence == aSynced.sequence + 1, "a change of the user's: \(left)")
            let (removed, reached) = try await sync(store, appId, "a", after: aSynced)
            #expect(removed.map(\.kind) == [.removed] && removed.map(\.notification.id) == [first], "\(removed)")
            #expect(removed.first?.sequence == aSynced.sequence + 1 && removed.first?.broadcastSequence == nil)
            #expect(try await sync(store, appId, "a", after: reached).0.isEmpty)

            // The second device is unregistered: the rest leaves a's feed; b's feed is as it was.
            let unregistered = try await events(applier, [StorageCommand(action: .unregisterSubscription(appId: appId, userId: "a", subscriptionId: later))])
            #expect(unregistered.map(\.kind) == [.removed] && unregistered.map(\.notificationId) == [second], "\(unregistered)")
            #expect(try await sync(store, appId, "a", after: reached).0.map(\.notification.id) == [second])
            #expect(try await store.history(appId: appId, userId: "a", filter: NotificationFilter(), limit: 10, pageToken: nil).notifications.isEmpty)
            #expect(try await sync(store, appId, "b", after: bSynced).0.isEmpty, "the other member's feed changed")
            #expect(try await store.history(appId: appId, userId: "b", filter: NotificationFilter(), limit: 10, pageToken: nil).notifications.count == 3)
        }
    }

    @Test("a leave of more memberships than are written at once is left to the sweep, which writes each user's removals and emits one event per user")
    func largeLeaveIsSwept() async throws {
        try await NotifyStoreTestDatabase.withDatabase { client, applier in
            let (appId, a, b) = try await seed(applier, client)
            let store = PostgresNotificationStore(client: client, logger: logger)
            let (first, second) = (UUID(), UUID())
            _ = try await applier.apply([broadcast(appId, first), broadcast(appId, second)])
            let (_, aSynced) = try await sync(store, appId, "a", after: SyncPosition())
            let ended = try await client.withTransaction(logger: logger) { connection in
                let memberships = try await connection.query(
                    "DELETE FROM event_source_members WHERE subscription_id = ANY(ARRAY[\(a), \(b)]::uuid[]) RETURNING subscription_id, joined_at",
                    logger: logger)
                var ended: [BroadcastRemoval.EndedMembership] = []
                for try await (id, joinedAt) in memberships.decode((UUID, Date).self) {
                    ended.append(.init(appId: appId, userId: id == a ? "a" : "b", eventSource: "news", joinedAt: joinedAt))
                }
                return try await BroadcastRemoval(connection: connection, logger: logger).write(ended, at: Date(), immediateLimit: 1)
            }
            #expect(ended.isEmpty, "written at once: \(ended)")
            #expect(try await sync(store, appId, "a", after: aSynced).0.isEmpty, "removed before the sweep")

            let swept = try await events(applier, [StorageCommand(action: .expireDueNotifications(dueBy: Date()))])
            #expect(swept.map(\.kind) == [.removed, .removed] && swept.map(\.userId).sorted() == ["a", "b"], "\(swept)")
            #expect(swept.first { $0.userId == "a" }?.sequence == 2, "a's last removal")
            let (removed, _) = try await sync(store, appId, "a", after: aSynced)
            #expect(removed.map(\.kind) == [.removed, .removed] && Set(removed.map(\.notification.id)) == [first, second], "\(removed)")
            #expect(try await events(applier, [StorageCommand(action: .expireDueNotifications(dueBy: Date()))]).isEmpty, "swept twice")
        }
    }
}
