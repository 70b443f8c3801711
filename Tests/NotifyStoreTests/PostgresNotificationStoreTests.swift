import Foundation
import NotifyDatabase
import NotifyModels
import PostgresNIO
import Testing

@testable import NotifyStore

/// The notification and delivery-log stores against the test stack's PostgreSQL, the rows written by storage's own
/// command applier, as in production.
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["NOTIFY_TEST_STACK"] != nil, "needs PostgreSQL: run deploy/local/test.sh"))
struct PostgresNotificationStoreTests {
    private static let logger = NotifyStoreTestDatabase.logger

    private static func content(_ title: String, groupName: String? = nil, expiresIn: TimeInterval = 3600) -> NotificationContent {
        NotificationContent(
            appNotificationId: nil, groupName: groupName, priority: .high, expirationDateTime: Date().addingTimeInterval(expiresIn),
            displayTimeToLive: nil, platformTypes: nil, payload: NotificationPayload(visualContent: VisualContent(title: title)), push: nil)
    }

    /// A new app with `users`' notifications titled as given, published in order; answers the app and the ids by title.
    private static func seed(
        _ applier: CommandBatchApplier, _ notifications: [(user: String, title: String, groupName: String?)]
    ) async throws -> (appId: String, ids: [String: UUID]) {
        let appId = "store_\(UUID().lowercasedString.prefix(12))"
        _ = try await applier.apply([StorageCommand(action: .createApp(AppRecord(
            appId: appId, name: "store test", apiKeyHash: UUID().lowercasedString, clientSigningKey: "key", brokerUser: nil, createdAt: Date())))])
        var ids: [String: UUID] = [:]
        for item in notifications {
            let id = UUID()
            ids[item.title] = id
            _ = try await applier.apply([StorageCommand(action: .publishNotification(PublishedNotification(
                appId: appId, userId: item.user, notificationId: id, content: content(item.title, groupName: item.groupName), receivedAt: Date())))])
        }
        return (appId, ids)
    }

    private static func change(_ appId: String, _ userId: String, _ id: UUID, read: Bool = false, delete: Bool = false) -> StorageCommand {
        StorageCommand(action: .changeNotificationState(NotificationStateChange(
            appId: appId, userId: userId, notificationId: id, readState: read ? .read : nil, userActionState: nil, delete: delete,
            originSubscriptionId: nil, requestedAt: Date())))
    }

    @Test("notification by id: the user's own, not another user's; changes in pages after a cursor, a state change listed again; changeSequence once applied")
    func notificationsAndChanges() async throws {
        try await NotifyStoreTestDatabase.withDatabase { client, applier in
            let store = PostgresNotificationStore(client: client, logger: Self.logger)
            let (appId, ids) = try await Self.seed(applier, [("alice", "a1", nil), ("alice", "a2", nil), ("alice", "a3", "chat"), ("bob", "b1", nil)])
            let a1 = try #require(ids["a1"])
            #expect(try await store.notification(appId: appId, id: a1, userId: "alice")?.payload?.visualContent?.title == "a1")
            #expect(try await store.notification(appId: appId, id: a1, userId: "bob") == nil)
            #expect(try await store.notification(appId: appId, id: a1, userId: nil)?.userId == "alice")

            let first = try await store.changes(appId: appId, userId: "alice", after: SyncPosition(), limit: 2, filter: NotificationFilter())
            #expect(first.changes.map(\.notification.payload?.visualContent?.title) == ["a1", "a2"] && first.hasMore)
            let position = try SyncCursor.decode(first.cursor)
            let rest = try await store.changes(appId: appId, userId: "alice", after: position, limit: 2, filter: NotificationFilter())
            #expect(rest.changes.map(\.notification.payload?.visualContent?.title) == ["a3"] && !rest.hasMore)
            let chat = try await store.changes(appId: appId, userId: "alice", after: SyncPosition(), limit: 10, filter: NotificationFilter(groupName: "chat"))
            #expect(chat.changes.map(\.notification.payload?.visualContent?.title) == ["a3"])

            let before = try #require(try await store.notification(appId: appId, id: a1, userId: "alice")).sequence
            #expect(try await store.changeSequence(appId: appId, userId: "alice", notificationId: a1, broadcast: false, after: before) == nil)
            _ = try await applier.apply([Self.change(appId, "alice", a1, read: true)])
            let after = try await store.changeSequence(appId: appId, userId: "alice", notificationId: a1, broadcast: false, after: before)
            #expect(after.map { $0 > before } == true)
            let latest = try await store.changes(appId: appId, userId: "alice", after: try SyncCursor.decode(rest.cursor), limit: 10, filter: NotificationFilter())
            #expect(latest.changes.map(\.kind) == [.stateChanged] && latest.changes.first?.notification.readState == .read)
            // A filter that the change no longer matches still lists a deletion.
            _ = try await applier.apply([Self.change(appId, "alice", a1, delete: true)])
            let deleted = try await store.changes(
                appId: appId, userId: "alice", after: try SyncCursor.decode(latest.cursor), limit: 10, filter: NotificationFilter(readState: .unread))
            #expect(deleted.changes.map(\.kind) == [.deleted])
            // From scratch each change is listed, with the notification as it is now (as MemoryNotificationStore lists them).
            let all = try await store.changes(appId: appId, userId: "alice", after: SyncPosition(), limit: 10, filter: NotificationFilter())
            #expect(all.changes.filter { $0.notification.id == a1 }.map(\.kind) == [.created, .stateChanged, .deleted])
            #expect(all.changes.filter { $0.notification.id == a1 }.allSatisfy { $0.notification.status == .deleted })
        }
    }

    @Test("ensureRetained refuses a cursor older than the purge with cursorExpired, and changes does too")
    func purgedCursors() async throws {
        try await NotifyStoreTestDatabase.withDatabase { client, applier in
            let store = PostgresNotificationStore(client: client, logger: Self.logger)
            let (appId, _) = try await Self.seed(applier, [("alice", "a1", nil), ("alice", "a2", nil), ("alice", "a3", nil)])
            try await store.ensureRetained(appId: appId, userId: "alice", after: 1)
            try await client.query("UPDATE user_sequences SET purged_through = 2 WHERE app_id = \(appId) AND user_id = 'alice'", logger: Self.logger)
            await #expect(throws: NotifyStoreError.cursorExpired) { try await store.ensureRetained(appId: appId, userId: "alice", after: 1) }
            await #expect(throws: NotifyStoreError.cursorExpired) {
                try await store.changes(appId: appId, userId: "alice", after: SyncPosition(sequence: 1), limit: 10, filter: NotificationFilter())
            }
            try await store.ensureRetained(appId: appId, userId: "alice", after: 0)
            try await store.ensureRetained(appId: appId, userId: "alice", after: 2)
        }
    }

    @Test("history newest first in pages with a token that a forged one cannot pass for; a deleted notification only under status=deleted")
    func historyPages() async throws {
        try await NotifyStoreTestDatabase.withDatabase { client, applier in
            let store = PostgresNotificationStore(client: client, logger: Self.logger)
            let (appId, ids) = try await Self.seed(applier, (1...5).map { ("alice", "h\($0)", nil) })
            let first = try await store.history(appId: appId, userId: "alice", filter: NotificationFilter(), limit: 3, pageToken: nil)
            #expect(first.notifications.map(\.payload?.visualContent?.title) == ["h5", "h4", "h3"])
            let second = try await store.history(appId: appId, userId: "alice", filter: NotificationFilter(), limit: 3, pageToken: first.nextPageToken)
            #expect(second.notifications.map(\.payload?.visualContent?.title) == ["h2", "h1"] && second.nextPageToken == nil)
            await #expect(throws: NotifyStoreError.invalidPageToken) {
                try await store.history(appId: appId, userId: "alice", filter: NotificationFilter(), limit: 3, pageToken: "forged")
            }
            _ = try await applier.apply([Self.change(appId, "alice", try #require(ids["h2"]), delete: true)])
            let active = try await store.history(appId: appId, userId: "alice", filter: NotificationFilter(), limit: 10, pageToken: nil)
            #expect(active.notifications.count == 4)
            let deleted = try await store.history(appId: appId, userId: "alice", filter: NotificationFilter(status: .deleted), limit: 10, pageToken: nil)
            #expect(deleted.notifications.map(\.id) == [ids["h2"]])
        }
    }

    @Test("a broadcast is in its event source's members' feeds with each user's own state; changeSequence follows that state")
    func broadcasts() async throws {
        try await NotifyStoreTestDatabase.withDatabase { client, applier in
            let store = PostgresNotificationStore(client: client, logger: Self.logger)
            let (appId, _) = try await Self.seed(applier, [])
            let phone = UUID()
            _ = try await applier.apply([
                StorageCommand(action: .putEventSource(EventSourceRecord(appId: appId, name: "news", policy: .open, description: nil, createdAt: Date()))),
                StoreCommands.register(phone, appId: appId, user: "alice"),
            ])
            _ = try await applier.apply([StorageCommand(action: .joinEventSource(appId: appId, name: "news", subscriptionIds: [phone]))])
            let id = UUID()
            _ = try await applier.apply([StorageCommand(action: .publishBroadcast(PublishedBroadcast(
                appId: appId, eventSource: "news", notificationId: id, content: Self.content("headline"), receivedAt: Date())))])

            let seen = try #require(try await store.notification(appId: appId, id: id, userId: "alice"))
            #expect(seen.eventSource == "news" && seen.readState == .unread)
            #expect(try await store.notification(appId: appId, id: id, userId: "bob") == nil)
            let page = try await store.changes(appId: appId, userId: "alice", after: SyncPosition(), limit: 10, filter: NotificationFilter())
            #expect(page.changes.map(\.notification.id) == [id] && page.changes.first?.broadcastSequence != nil)
            #expect(try await store.history(appId: appId, userId: "alice", filter: NotificationFilter(), limit: 10, pageToken: nil).notifications.map(\.id) == [id])

            _ = try await applier.apply([Self.change(appId, "alice", id, read: true)])
            let sequence = try await store.changeSequence(appId: appId, userId: "alice", notificationId: id, broadcast: true, after: seen.sequence)
            #expect(sequence != nil)
            #expect(try await store.notification(appId: appId, id: id, userId: "alice")?.readState == .read)
        }
    }

    @Test("the delivery log in pages, oldest first, an outcome logged twice listed once; the summary counts each push by its latest attempt")
    func deliveryLog() async throws {
        try await NotifyStoreTestDatabase.withDatabase { client, _ in
            let store = PostgresDeliveryLogStore(client: client, logger: Self.logger)
            let appId = "store_\(UUID().lowercasedString.prefix(12))"
            let notification = UUID()
            let start = Date(timeIntervalSinceNow: -60)
            let pushes = (0..<3).map { _ in UUID() }
            func outcome(_ index: Int, attempt: Int, result: PushOutcome.Result, at offset: TimeInterval) -> PushOutcome {
                PushOutcome(
                    pushId: pushes[index], appId: appId, subscriptionId: UUID(), notificationId: notification, sequence: 1,
                    platform: index == 2 ? .fcm : .apns, result: result, status: nil, reason: nil, attempt: attempt, invalidSince: nil,
                    at: start.addingTimeInterval(offset))
            }
            let firstMessage = [outcome(0, attempt: 1, result: .retrying, at: 0), outcome(1, attempt: 1, result: .accepted, at: 1)]
            let firstKey = UUID()
            try await client.query(PostgresDeliveryLogStore.recording(firstMessage, keys: [firstKey, firstKey]), logger: Self.logger)
            // The same outcome in a second feedback message (redelivered): listed once.
            try await client.query(PostgresDeliveryLogStore.recording([firstMessage[1]], keys: [UUID()]), logger: Self.logger)
            let later = [outcome(2, attempt: 1, result: .accepted, at: 2), outcome(0, attempt: 2, result: .tokenInvalid, at: 10)]
            let key = UUID()
            try await client.query(PostgresDeliveryLogStore.recording(later, keys: [key, key]), logger: Self.logger)

            let first = try await store.deliveries(appId: appId, notificationId: notification, since: nil, limit: 2, pageToken: nil)
            #expect(first.deliveries.map(\.result) == ["retrying", "accepted"])
            let rest = try await store.deliveries(appId: appId, notificationId: notification, since: nil, limit: 2, pageToken: first.nextPageToken)
            #expect(rest.deliveries.map(\.result) == ["accepted", "tokenInvalid"] && rest.nextPageToken == nil)
            let since = try await store.deliveries(appId: appId, notificationId: nil, since: start.addingTimeInterval(5), limit: 10, pageToken: nil)
            #expect(since.deliveries.map(\.result) == ["tokenInvalid"])
            await #expect(throws: NotifyStoreError.invalidPageToken) {
                try await store.deliveries(appId: appId, notificationId: notification, since: nil, limit: 2, pageToken: "forged")
            }

            let summary = try await store.deliverySummary(appId: appId, notificationId: notification)
            #expect(summary.pushes == 3)
            #expect(summary.byResult == ["accepted": 2, "tokenInvalid": 1])
            #expect(summary.byProvider == ["apns": ["accepted": 1, "tokenInvalid": 1], "fcm": ["accepted": 1]])
        }
    }
}
