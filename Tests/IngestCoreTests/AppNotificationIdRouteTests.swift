import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NotifyModels
import NotifyStore
import NotifyStoreTesting
import Testing

@testable import IngestCore

/// The app server's handle on a user's notification by the app's own id
/// (`/v1/apps/{appId}/users/{userId}/notifications/{appNotificationId}`), in-process: the notification published with
/// that `appNotificationId` to that user, reached through its own app only.
@Suite struct AppNotificationIdRouteTests {
    private static func path(_ userId: String, _ appNotificationId: String, app appId: String = RouteTesting.appId) -> String {
        "/v1/apps/\(appId)/users/\(userId)/notifications/\(appNotificationId)"
    }

    /// Stores a notification as a publish with `appNotificationId` would have (its id derived from the app's, the
    /// user's and the app's own id).
    @discardableResult
    private static func publish(_ testing: RouteTesting, to userId: String, as appNotificationId: String, app appId: String = RouteTesting.appId) -> NotificationView {
        var view = RouteTesting.notification(for: userId, title: appNotificationId)
        view.id = DeterministicID.notificationID(appId: appId, userId: userId, appNotificationId: appNotificationId)
        view.appNotificationId = appNotificationId
        return testing.notifications.publish(view, appId: appId)
    }

    @Test("the app server reads (200), changes (200, storage told) and deletes (204) a user's notification by its own id; after that it is not found (404)")
    func readChangeDelete() async throws {
        let testing = RouteTesting()
        let published = Self.publish(testing, to: "alice", as: "order-17")
        let path = Self.path("alice", "order-17")
        try await testing.run { client in
            let found = try await client.execute(uri: path, method: .get, headers: [.authorization: "Bearer read-key"])
            #expect(found.status == .ok)
            let view = try RouteTesting.decode(NotificationView.self, found)
            #expect((view.id, view.appNotificationId, view.userId, view.readState) == (published.id, "order-17", "alice", .unread))

            let read = try await client.execute(uri: path, method: .patch, headers: RouteTesting.apiKeyHeaders, body: ByteBuffer(string: #"{"readState":"read"}"#))
            #expect(read.status == .ok)
            #expect(try RouteTesting.decode(NotificationView.self, read).readState == .read)
            guard case .changeNotificationState(let change) = testing.published.commands.last?.action else {
                Issue.record("no state change was sent to storage")
                return
            }
            #expect((change.appId, change.userId, change.notificationId, change.readState, change.delete) == (RouteTesting.appId, "alice", published.id, .read, false))
            #expect(change.originSubscriptionId == nil)
            let invalid = try await client.execute(uri: path, method: .patch, headers: RouteTesting.apiKeyHeaders, body: ByteBuffer(string: #"{"readState":"maybe"}"#))
            #expect(invalid.status == .badRequest)
            #expect(try ErrorBody(invalid).error.field == "readState")

            let deleted = try await client.execute(uri: path, method: .delete, headers: RouteTesting.apiKeyHeaders)
            #expect(deleted.status == .noContent)
            for method in [HTTPRequest.Method.get, .patch, .delete] {
                let gone = try await client.execute(uri: path, method: method, headers: RouteTesting.apiKeyHeaders, body: ByteBuffer(string: #"{"readState":"unread"}"#))
                #expect(gone.status == .notFound, "\(method)")
                #expect(try ErrorBody(gone).error.code == "notification_not_found", "\(method)")
                #expect(try ErrorBody(gone).error.field == "appNotificationId", "\(method)")
            }
        }
    }

    @Test("an id the app never used, another user's notification, and another app's (with the same user and id) are not found (404), and are left as they were; another app's key is refused (401)")
    func onlyItsOwnAppAndUser() async throws {
        let testing = RouteTesting()
        Self.publish(testing, to: "alice", as: "order-17")
        Self.publish(testing, to: "bob", as: "order-18")
        let othersApp = Self.publish(testing, to: "alice", as: "order-99", app: FixedApp.externalBadgeAppId)
        try await testing.run { client in
            for path in [Self.path("alice", "never-sent"), Self.path("bob", "order-17"), Self.path("alice", "order-18"), Self.path("alice", "order-99")] {
                for method in [HTTPRequest.Method.get, .patch, .delete] {
                    let response = try await client.execute(
                        uri: path, method: method, headers: RouteTesting.apiKeyHeaders, body: ByteBuffer(string: #"{"readState":"read"}"#))
                    #expect(response.status == .notFound, "\(method) \(path)")
                    #expect(try ErrorBody(response).error.code == "notification_not_found", "\(method) \(path)")
                    #expect(try ErrorBody(response).error.field == "appNotificationId", "\(method) \(path)")
                }
            }
            #expect(testing.published.commands.isEmpty)
            let untouched = try await testing.notifications.notification(appId: FixedApp.externalBadgeAppId, id: othersApp.id, userId: nil)
            #expect(untouched?.readState == .unread && untouched?.status == .active)

            // An app of its own (its own key) reaches its users' notifications only under its own id.
            let created = try await client.execute(uri: "/v1/apps", method: .post, headers: RouteTesting.operatorHeaders, body: ByteBuffer(string: #"{"name":"Other"}"#))
            let other = try RouteTesting.decode(CreatedApp.self, created)
            let refused = try await client.execute(uri: Self.path("alice", "order-17"), method: .get, headers: [.authorization: "Bearer \(other.apiKey)"])
            #expect(refused.status == .unauthorized)
            let ownPath = try await client.execute(
                uri: Self.path("alice", "order-17", app: other.appId), method: .get, headers: [.authorization: "Bearer \(other.apiKey)"])
            #expect(ownPath.status == .notFound)
        }
    }
}
