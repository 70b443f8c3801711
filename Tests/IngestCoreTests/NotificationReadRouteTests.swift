import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NotifyModels
import NotifyStore
import NotifyStoreTesting
import Testing

@testable import IngestCore

/// The routes that read notifications (a device's changes, history and one notification; the app server's view and
/// delivery log) and change their state, in-process on stores held in memory.
@Suite struct NotificationReadRouteTests {
    private static let appId = RouteTesting.appId

    @Test("a device's changes: from scratch, then after its cursor, a page at a time with hasMore; only its own user's")
    func changesFollowTheCursor() async throws {
        let testing = RouteTesting()
        let titles = (1...5).map { "n\($0)" }
        for title in titles { testing.notifications.publish(RouteTesting.notification(for: "alice", title: title), appId: Self.appId) }
        testing.notifications.publish(RouteTesting.notification(for: "bob", title: "for bob"), appId: Self.appId)
        try await testing.run { client in
            let alice = try await RouteTesting.bearerUser("alice")
            var seen: [String] = []
            var cursor = ""
            var pages = 0
            repeat {
                let response = try await client.execute(
                    uri: "/v1/me/notifications/changes?limit=2" + (cursor.isEmpty ? "" : "&cursor=\(cursor)"), method: .get, headers: alice)
                #expect(response.status == .ok)
                let page = try RouteTesting.decode(ChangePage.self, response)
                seen += page.changes.compactMap { $0.notification.payload?.visualContent?.title }
                #expect(page.changes.allSatisfy { $0.kind == .created && $0.notification.userId == "alice" })
                cursor = page.cursor
                pages += 1
                if !page.hasMore { break }
            } while pages < 10
            #expect(seen == titles)
            #expect(pages == 3)

            // Nothing new after the last cursor; a change afterwards is listed once.
            let none = try RouteTesting.decode(ChangePage.self, try await client.execute(uri: "/v1/me/notifications/changes?cursor=\(cursor)", method: .get, headers: alice))
            #expect(none.changes.isEmpty && !none.hasMore)
        }
    }

    @Test("a cursor older than the retained changes is answered 410 cursor_expired; one not given out, 400 naming cursor")
    func expiredAndForgedCursors() async throws {
        let testing = RouteTesting()
        for title in ["a", "b", "c"] { testing.notifications.publish(RouteTesting.notification(for: "alice", title: title), appId: Self.appId) }
        testing.notifications.purgeChanges(appId: Self.appId, userId: "alice", through: 2)
        try await testing.run { client in
            let alice = try await RouteTesting.bearerUser("alice")
            let expired = try await client.execute(
                uri: "/v1/me/notifications/changes?cursor=\(SyncCursor.encode(SyncPosition(sequence: 1)))", method: .get, headers: alice)
            #expect(expired.status == .gone)
            #expect(try ErrorBody(expired).error.code == "cursor_expired")
            #expect(try ErrorBody(expired).error.field == "cursor")
            let forged = try await client.execute(uri: "/v1/me/notifications/changes?cursor=bm90LWEtY3Vyc29y", method: .get, headers: alice)
            #expect(forged.status == .badRequest)
            #expect(try ErrorBody(forged).error.field == "cursor")
            let badLimit = try await client.execute(uri: "/v1/me/notifications/changes?limit=0", method: .get, headers: alice)
            #expect(try ErrorBody(badLimit).error.field == "limit")
        }
    }

    @Test("history: active notifications newest first in pages, filtered by readState and groupName; expired ones only under status=expired")
    func historyPages() async throws {
        let testing = RouteTesting()
        let start = Date(timeIntervalSinceNow: -100)
        for index in 0..<5 {
            testing.notifications.publish(
                RouteTesting.notification(for: "alice", title: "h\(index)", createdAt: start.addingTimeInterval(Double(index)), groupName: index == 4 ? "chat" : nil),
                appId: Self.appId)
        }
        testing.notifications.publish(
            RouteTesting.notification(for: "alice", title: "gone", createdAt: start.addingTimeInterval(-50), expiresIn: 10), appId: Self.appId)
        try await testing.run { client in
            let alice = try await RouteTesting.bearerUser("alice")
            let first = try RouteTesting.decode(HistoryPage.self, try await client.execute(uri: "/v1/me/notifications?limit=3", method: .get, headers: alice))
            #expect(first.notifications.map { $0.payload?.visualContent?.title } == ["h4", "h3", "h2"])
            let token = try #require(first.nextPageToken)
            let second = try RouteTesting.decode(
                HistoryPage.self, try await client.execute(uri: "/v1/me/notifications?limit=3&pageToken=\(token)", method: .get, headers: alice))
            #expect(second.notifications.map { $0.payload?.visualContent?.title } == ["h1", "h0"])
            #expect(second.nextPageToken == nil)

            let chat = try RouteTesting.decode(HistoryPage.self, try await client.execute(uri: "/v1/me/notifications?groupName=chat", method: .get, headers: alice))
            #expect(chat.notifications.map { $0.payload?.visualContent?.title } == ["h4"])
            let expired = try RouteTesting.decode(HistoryPage.self, try await client.execute(uri: "/v1/me/notifications?status=expired", method: .get, headers: alice))
            #expect(expired.notifications.map { $0.payload?.visualContent?.title } == ["gone"])

            let forged = try await client.execute(uri: "/v1/me/notifications?pageToken=forged", method: .get, headers: alice)
            #expect(forged.status == .badRequest)
            #expect(try ErrorBody(forged).error.field == "pageToken")
            let badState = try await client.execute(uri: "/v1/me/notifications?readState=maybe", method: .get, headers: alice)
            #expect(try ErrorBody(badState).error.field == "readState")
        }
    }

    @Test("one notification: the user's own is answered, another user's is 404 naming id, and a broadcast only in its audience's feed")
    func oneNotification() async throws {
        let testing = RouteTesting()
        let own = testing.notifications.publish(RouteTesting.notification(for: "alice", title: "mine"), appId: Self.appId)
        let bobs = testing.notifications.publish(RouteTesting.notification(for: "bob", title: "bob's"), appId: Self.appId)
        let news = RouteTesting.notification(for: "", title: "news")
        testing.notifications.broadcast(news, appId: Self.appId, eventSource: "news", audience: ["alice"])
        try await testing.run { client in
            let alice = try await RouteTesting.bearerUser("alice")
            let found = try await client.execute(uri: "/v1/me/notifications/\(own.id)", method: .get, headers: alice)
            #expect(found.status == .ok)
            #expect(try RouteTesting.decode(NotificationView.self, found).payload?.visualContent?.title == "mine")
            let other = try await client.execute(uri: "/v1/me/notifications/\(bobs.id)", method: .get, headers: alice)
            #expect(other.status == .notFound)
            #expect(try ErrorBody(other).error.field == "id")
            let broadcast = try await client.execute(uri: "/v1/me/notifications/\(news.id)", method: .get, headers: alice)
            #expect(try RouteTesting.decode(NotificationView.self, broadcast).eventSource == "news")
            let notInAudience = try await client.execute(uri: "/v1/me/notifications/\(news.id)", method: .get, headers: try await RouteTesting.bearerUser("bob"))
            #expect(notInAudience.status == .notFound)
            let notAnId = try await client.execute(uri: "/v1/me/notifications/not-an-id", method: .get, headers: alice)
            #expect(try ErrorBody(notAnId).error.field == "id")
        }
    }

    @Test("a device marks its notification read: storage is sent the change with the device as origin, and the answer is the notification as stored; then it deletes it (204)")
    func deviceChangesState() async throws {
        let testing = RouteTesting()
        let own = testing.notifications.publish(RouteTesting.notification(for: "alice", title: "mine"), appId: Self.appId)
        let device = UUID()
        try await testing.run { client in
            var headers = try await RouteTesting.bearerUser("alice")
            headers[MyNotificationRoutes.subscriptionHeader] = device.uuidString
            let read = try await client.execute(
                uri: "/v1/me/notifications/\(own.id)", method: .patch, headers: headers, body: ByteBuffer(string: #"{"readState":"read"}"#))
            #expect(read.status == .ok)
            let view = try RouteTesting.decode(NotificationView.self, read)
            #expect(view.readState == .read && view.sequence > own.sequence)
            guard case .changeNotificationState(let change) = testing.published.commands.last?.action else {
                Issue.record("no state change was sent to storage")
                return
            }
            #expect(change.notificationId == own.id && change.readState == .read && change.originSubscriptionId == device && !change.delete)

            let empty = try await client.execute(uri: "/v1/me/notifications/\(own.id)", method: .patch, headers: headers, body: ByteBuffer(string: "{}"))
            #expect(empty.status == .badRequest)
            #expect(try ErrorBody(empty).error.field == "readState")

            let deleted = try await client.execute(uri: "/v1/me/notifications/\(own.id)", method: .delete, headers: headers)
            #expect(deleted.status == .noContent)
            let changes = try RouteTesting.decode(ChangePage.self, try await client.execute(uri: "/v1/me/notifications/changes", method: .get, headers: headers))
            #expect(changes.changes.map(\.kind) == [.created, .stateChanged, .deleted])
            let gone = try await client.execute(uri: "/v1/me/notifications/\(own.id)", method: .patch, headers: headers, body: ByteBuffer(string: #"{"readState":"unread"}"#))
            #expect(gone.status == .notFound)
        }
    }

    @Test("the app server reads, changes and deletes a user's notification by id, but not a broadcast's state (409) nor another app's (404)")
    func appServerView() async throws {
        let testing = RouteTesting()
        let own = testing.notifications.publish(RouteTesting.notification(for: "alice", title: "mine"), appId: Self.appId)
        let news = RouteTesting.notification(for: "", title: "news")
        testing.notifications.broadcast(news, appId: Self.appId, eventSource: "news", audience: ["alice"])
        let path = "/v1/apps/\(Self.appId)/notifications"
        try await testing.run { client in
            let found = try await client.execute(uri: "\(path)/\(own.id)", method: .get, headers: RouteTesting.apiKeyHeaders)
            #expect(found.status == .ok)
            #expect(try RouteTesting.decode(NotificationView.self, found).userId == "alice")
            let dismissed = try await client.execute(
                uri: "\(path)/\(own.id)", method: .patch, headers: RouteTesting.apiKeyHeaders, body: ByteBuffer(string: #"{"userActionState":"dismissed"}"#))
            #expect(try RouteTesting.decode(NotificationView.self, dismissed).userActionState == .dismissed)
            let broadcast = try await client.execute(
                uri: "\(path)/\(news.id)", method: .patch, headers: RouteTesting.apiKeyHeaders, body: ByteBuffer(string: #"{"readState":"read"}"#))
            #expect(broadcast.status == .conflict)
            #expect(try ErrorBody(broadcast).error.code == "broadcast_state_is_per_user")
            let readKey = try await client.execute(
                uri: "\(path)/\(own.id)", method: .patch, headers: [.authorization: "Bearer read-key"], body: ByteBuffer(string: #"{"readState":"read"}"#))
            #expect(readKey.status == .forbidden)
            let otherApp = try await client.execute(uri: "/v1/apps/\(FixedApp.externalBadgeAppId)/notifications/\(own.id)", method: .get, headers: RouteTesting.apiKeyHeaders)
            #expect(otherApp.status == .notFound)
            #expect(try await client.execute(uri: "/v1/apps/\(FixedApp.externalBadgeAppId)/notifications/\(own.id)", method: .delete, headers: RouteTesting.apiKeyHeaders).status == .notFound)

            let deleted = try await client.execute(uri: "\(path)/\(own.id)", method: .delete, headers: RouteTesting.apiKeyHeaders)
            #expect(deleted.status == .noContent)
            guard case .changeNotificationState(let change) = testing.published.commands.last?.action else {
                Issue.record("no deletion was sent to storage")
                return
            }
            #expect(change.notificationId == own.id && change.delete)
            #expect(try await client.execute(uri: "\(path)/\(own.id)", method: .get, headers: RouteTesting.apiKeyHeaders).status == .notFound)
        }
    }

    @Test("a notification's delivery log in pages (oldest first, an outcome logged twice listed once) and its summary by latest attempt")
    func deliveryLog() async throws {
        let testing = RouteTesting()
        let notification = UUID()
        let start = Date(timeIntervalSinceNow: -60)
        let pushes = (0..<3).map { _ in UUID() }
        for (index, push) in pushes.enumerated() {
            let first = DeliveryRecord(
                notificationId: notification, pushId: push, subscriptionId: UUID(), platform: index == 2 ? "fcm" : "apns", sequence: 1, attempt: 1,
                result: index == 0 ? "retrying" : "accepted", status: index == 0 ? 503 : 200, reason: nil, at: start.addingTimeInterval(Double(index)))
            testing.deliveryLog.record(first, appId: Self.appId)
            if index == 1 { testing.deliveryLog.record(first, appId: Self.appId) }
        }
        var retried = DeliveryRecord(
            notificationId: notification, pushId: pushes[0], subscriptionId: UUID(), platform: "apns", sequence: 1, attempt: 2, result: "tokenInvalid",
            status: 410, reason: "Unregistered", at: start.addingTimeInterval(10))
        testing.deliveryLog.record(retried, appId: Self.appId)
        retried.notificationId = UUID()
        testing.deliveryLog.record(retried, appId: "another_app")
        let path = "/v1/apps/\(Self.appId)/notifications/\(notification)/deliveries"
        try await testing.run { client in
            let first = try RouteTesting.decode(DeliveryPage.self, try await client.execute(uri: "\(path)?limit=2", method: .get, headers: RouteTesting.apiKeyHeaders))
            #expect(first.deliveries.map(\.attempt) == [1, 1])
            let token = try #require(first.nextPageToken)
            let rest = try RouteTesting.decode(DeliveryPage.self, try await client.execute(uri: "\(path)?limit=2&pageToken=\(token)", method: .get, headers: RouteTesting.apiKeyHeaders))
            #expect(rest.deliveries.map(\.result) == ["accepted", "tokenInvalid"])
            #expect(rest.nextPageToken == nil)

            let summary = try RouteTesting.decode(DeliverySummary.self, try await client.execute(uri: "\(path)/summary", method: .get, headers: RouteTesting.apiKeyHeaders))
            #expect(summary.pushes == 3)
            #expect(summary.byResult == ["accepted": 2, "tokenInvalid": 1])
            #expect(summary.byProvider == ["apns": ["accepted": 1, "tokenInvalid": 1], "fcm": ["accepted": 1]])

            let appLog = try RouteTesting.decode(
                DeliveryPage.self, try await client.execute(uri: "/v1/apps/\(Self.appId)/deliveries", method: .get, headers: RouteTesting.apiKeyHeaders))
            #expect(appLog.deliveries.count == 4 && appLog.deliveries.allSatisfy { $0.notificationId == notification })
            let forged = try await client.execute(uri: "\(path)?pageToken=forged", method: .get, headers: RouteTesting.apiKeyHeaders)
            #expect(try ErrorBody(forged).error.field == "pageToken")
            let badSince = try await client.execute(uri: "/v1/apps/\(Self.appId)/deliveries?since=yesterday", method: .get, headers: RouteTesting.apiKeyHeaders)
            #expect(try ErrorBody(badSince).error.field == "since")
        }
    }
}
