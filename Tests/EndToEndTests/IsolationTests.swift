import Foundation
import NotifyModels
import Testing

extension EndToEndTests {
    @Suite("isolation between users and between apps")
    struct IsolationTests {
        @Test("user X's token neither sees nor changes user Y's notification")
        func usersAreIsolated() async throws {
            let app = try await TestApp.create()
            let x = try await app.user("x-\(uniqueSuffix())")
            let y = try await app.user("y-\(uniqueSuffix())")
            let ofX = try await app.publishAccepted(.alert(to: x.userId, title: "for X"))
            let ofY = try await app.publishAccepted(.alert(to: y.userId, title: "for Y"))
            _ = try await y.waitForChanges(after: nil) { !$0.isEmpty }
            _ = try await x.waitForChanges(after: nil) { !$0.isEmpty }

            let read = try await x.notification(ofY)
            expectAPIError(read, status: 404, field: "id", "X reads Y's notification")
            let changes = try await x.allChanges(after: nil).changes
            #expect(changes.map { $0.notification.id.uuidString.lowercased() } == [ofX], "X's changes: \(describe(changes))")
            #expect(changes.allSatisfy { $0.notification.userId == x.userId })
            let history = try await x.history()
            #expect(history.notifications.map { $0.id.uuidString.lowercased() } == [ofX], "X's history")
            let patched = try await x.patch(ofY, StateChangeRequest(readState: .read, userActionState: .dismissed))
            expectAPIError(patched, status: 404, field: "id", "X changes Y's notification")
            let deleted = try await x.delete(ofY)
            expectAPIError(deleted, status: 404, field: "id", "X deletes Y's notification")

            // Y's notification is untouched: one change, still unread, active and not dismissed.
            try await Task.sleep(for: .milliseconds(500))
            let ofYNow = try await y.notification(ofY)
            #expect(ofYNow.status == 200, "Y reads its own notification: \(ofYNow.status) \(ofYNow.text)")
            if ofYNow.status == 200 {
                let view = try ofYNow.decode(NotificationView.self)
                #expect(view.readState == .unread && view.userActionState == .noInteraction && view.status == .active, "Y's notification was changed: \(ofYNow.text)")
                #expect(view.sequence == 1)
            }
            let yChanges = try await y.allChanges(after: nil).changes
            #expect(yChanges.map(\.kind) == [.created], "Y's changes: \(describe(yChanges))")
        }

        @Test("app P's user tokens and API key reach none of app Q's notifications")
        func appsAreIsolated() async throws {
            async let makeP = TestApp.create()
            async let makeQ = TestApp.create()
            let (p, q) = try await (makeP, makeQ)
            let userId = "shared-\(uniqueSuffix())"
            let inP = try await p.user(userId)
            let inQ = try await q.user(userId)
            let ofP = try await p.publishAccepted(.alert(to: userId, title: "from P"))
            var request = NotificationRequest.alert(to: userId, title: "from Q")
            let appNotificationId = "q-\(uniqueSuffix())"
            request.appNotificationId = appNotificationId
            let ofQ = try await q.publishAccepted(request)
            _ = try await inP.waitForChanges(after: nil) { !$0.isEmpty }
            _ = try await inQ.waitForChanges(after: nil) { !$0.isEmpty }

            // The same user id in app P: its token sees only P's notification.
            expectAPIError(try await inP.notification(ofQ), status: 404, field: "id", "P's user token reads Q's notification")
            let changes = try await inP.allChanges(after: nil).changes
            #expect(changes.map { $0.notification.id.uuidString.lowercased() } == [ofP], "P's changes: \(describe(changes))")
            let history = try await inP.history()
            #expect(history.notifications.map { $0.id.uuidString.lowercased() } == [ofP], "P's history")
            expectAPIError(try await inP.patch(ofQ, StateChangeRequest(readState: .read)), status: 404, field: "id", "P's user token changes Q's notification")
            expectAPIError(try await inP.delete(ofQ), status: 404, field: "id", "P's user token deletes Q's notification")

            // P's API key on its own paths with Q's notification: not found.
            expectAPIError(try await p.appServer(.GET, "/notifications/\(ofQ)"), status: 404, field: "id", "P's API key reads Q's notification under P")
            expectAPIError(try await p.appServer(.DELETE, "/notifications/\(ofQ)"), status: 404, field: "id", "P's API key deletes Q's notification under P")
            expectAPIError(
                try await p.appServer(.GET, "/users/\(userId)/notifications/\(appNotificationId)"), status: 404, field: "appNotificationId",
                "P's API key reads Q's notification by Q's appNotificationId under P")

            // P's API key on Q's paths: unauthorized.
            let onQ: [(StackClient.Method, String, Data?)] = [
                (.GET, "/notifications/\(ofQ)", nil),
                (.PATCH, "/notifications/\(ofQ)", try StackClient.encode(StateChangeRequest(readState: .read))),
                (.DELETE, "/notifications/\(ofQ)", nil),
                (.GET, "/users/\(userId)/notifications/\(appNotificationId)", nil),
                (.DELETE, "/users/\(userId)/notifications/\(appNotificationId)", nil),
                (.POST, "/notifications", try StackClient.encode(NotificationRequest.alert(to: userId, title: "P posing as Q"))),
            ]
            for (method, path, body) in onQ {
                let answer = try await q.appServer(method, path, json: body, apiKey: p.apiKey)
                #expect(answer.status == 401 || answer.status == 404, "P's API key: \(method) /v1/apps/\(q.appId)\(path) answered \(answer.status): \(answer.text)")
            }

            // Q's notification is untouched and still Q's only.
            let ofQNow = try await q.appServer(.GET, "/notifications/\(ofQ)")
            #expect(ofQNow.status == 200, "Q reads its own notification: \(ofQNow.status) \(ofQNow.text)")
            if ofQNow.status == 200 {
                let view = try ofQNow.decode(NotificationView.self)
                #expect(view.readState == .unread && view.status == .active && view.sequence == 1, "Q's notification was changed: \(ofQNow.text)")
            }
            let qChanges = try await inQ.allChanges(after: nil).changes
            #expect(qChanges.map { $0.notification.id.uuidString.lowercased() } == [ofQ], "Q's changes (P's posing publish must not be there): \(describe(qChanges))")
        }
    }
}
