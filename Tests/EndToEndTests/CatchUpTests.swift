import Foundation
import NotifyModels
import Testing

extension EndToEndTests {
    @Suite("expiry and offline catch-up")
    struct CatchUpTests {
        @Test("history pages through a batch (notifications of one creation time) showing each exactly once, whatever the page size")
        func historyPagesThroughOneCreationTime() async throws {
            struct Batch: Encodable { var notifications: [NotificationRequest] }
            let app = try await TestApp.create()
            let userId = "user-\(uniqueSuffix())"
            let user = try await app.user(userId)
            let answer = try await app.publish(Batch(notifications: (0..<9).map { .alert(to: userId, title: "batch \($0)") }))
            #expect(answer.status == 202, "\(answer.text)")
            var stored: [NotificationView] = []
            let deadline = ContinuousClock.now + .seconds(20)
            while stored.count < 9 && ContinuousClock.now < deadline {
                stored = try await user.history(query: "limit=50").notifications
                try await Task.sleep(for: .milliseconds(100))
            }
            try #require(stored.count == 9, "the batch was not stored within 20 s")
            #expect(Set(stored.map(\.createdDateTime)).count == 1, "the batch shares one creation time")

            for limit in [1, 2, 4] {
                var seen: [UUID] = []
                var token: String?
                repeat {
                    let page = try await user.history(query: "limit=\(limit)" + (token.map { "&pageToken=\($0)" } ?? ""))
                    seen += page.notifications.map(\.id)
                    token = page.nextPageToken
                } while token != nil && seen.count <= 9
                #expect(seen == stored.map(\.id), "pages of \(limit): \(seen.count) notifications, in another order or repeated")
            }
        }

        @Test("a notification past its expirationDateTime becomes an expired change and leaves history")
        func expiryIsSynced() async throws {
            let app = try await TestApp.create()
            let userId = "user-\(uniqueSuffix())"
            let user = try await app.user(userId)
            let staying = try await app.publishAccepted(.alert(to: userId, title: "stays"))
            var request = NotificationRequest.alert(to: userId, title: "expires soon")
            request.expirationDateTime = Date().addingTimeInterval(3)
            let expiring = try await app.publishAccepted(request)
            let created = try await user.waitForChanges(after: nil) { $0.count >= 2 }
            #expect(Set(created.map { $0.notification.id.uuidString.lowercased() }) == [staying, expiring], "created: \(describe(created))")
            let cursor = try await user.currentCursor()

            // The sweeper runs every 5 s: the expiry shows within ~3 s + 5 s + processing.
            let changes = try await user.waitForChanges(after: cursor, timeout: .seconds(20)) { !$0.isEmpty }
            #expect(changes.map(\.kind) == [.expired], "changes after the expiration: \(describe(changes))")
            if let expired = changes.first {
                #expect(expired.notification.id.uuidString.lowercased() == expiring)
                #expect(expired.notification.status == .expired)
                #expect(expired.sequence == 3)
            }
            let history = try await user.history()
            #expect(history.notifications.map { $0.id.uuidString.lowercased() } == [staying], "history after the expiration")
            let expiredHistory = try await user.history(query: "status=expired")
            #expect(expiredHistory.notifications.map { $0.id.uuidString.lowercased() } == [expiring], "history with status=expired")
        }

        @Test("a device offline during 30 changes catches up page by page (limit 7): all of them, in order, once each")
        func offlineDeviceCatchesUp() async throws {
            let app = try await TestApp.create()
            let userId = "user-\(uniqueSuffix())"
            let user = try await app.user(userId)
            // Something before the device went offline.
            let before = try await app.publishAccepted(.alert(to: userId, title: "before"))
            _ = try await user.waitForChanges(after: nil) { !$0.isEmpty }
            let cursor = try await user.currentCursor()
            let start = try SyncCursor.decode(cursor).sequence
            #expect(start == 1)

            // 30 changes while it is offline: 20 publishes, 9 state changes, 1 delete.
            var published: [String] = []
            for index in 0..<20 {
                published.append(try await app.publishAccepted(.alert(to: userId, title: "while offline \(index)")))
            }
            _ = try await user.waitForChanges(after: cursor) { $0.count >= 20 }
            var expected: [(kind: ChangeKind, id: String)] = published.map { (.created, $0) }
            for index in 0..<9 {
                let id = published[index]
                let body = index % 3 == 0 ? StateChangeRequest(userActionState: .dismissed)
                    : index % 3 == 1 ? StateChangeRequest(readState: .read) : StateChangeRequest(readState: .read, userActionState: .activated)
                try await user.patchAccepted(id, body)
                expected.append((.stateChanged, id))
            }
            let deleted = try await app.appServer(.DELETE, "/notifications/\(published[19])")
            #expect(deleted.status == 204 || deleted.status == 202, "DELETE: \(deleted.status) \(deleted.text)")
            expected.append((.deleted, published[19]))
            _ = try await user.waitForChanges(after: cursor) { $0.count >= 30 }

            // Back online: follow the cursor with limit 7.
            var pages: [ChangePage] = []
            var next = cursor
            while pages.count < 20 {
                let page = try await user.changes(after: next, limit: 7)
                pages.append(page)
                next = page.cursor
                if !page.hasMore { break }
            }
            let changes = pages.flatMap(\.changes)
            #expect(pages.map(\.changes.count) == [7, 7, 7, 7, 2], "page sizes")
            #expect(changes.map(\.sequence) == Array((start + 1)...(start + 30)), "sequences: \(describe(changes))")
            let publishes = changes.prefix(20)
            #expect(publishes.allSatisfy { $0.kind == .created }, "the 20 publishes come first: \(describe(changes))")
            #expect(Set(publishes.map { $0.notification.id.uuidString.lowercased() }) == Set(published), "the created notifications")
            #expect(Set(publishes.map { $0.notification.id.uuidString.lowercased() }).count == 20, "a notification was created twice")
            let rest = changes.dropFirst(20).map { ($0.kind, $0.notification.id.uuidString.lowercased()) }
            let expectedRest = expected.dropFirst(20).map { ($0.kind, $0.id) }
            #expect(rest.map(\.0) == expectedRest.map(\.0), "kinds of the state changes and the delete: \(describe(changes))")
            #expect(rest.map(\.1) == expectedRest.map(\.1), "ids of the state changes and the delete")
            #expect(!changes.contains { $0.notification.id.uuidString.lowercased() == before }, "a change from before the cursor came again")
            if let tombstone = changes.last {
                #expect(tombstone.notification.status == .deleted)
            }
            // The last cursor is current: nothing more.
            let after = try await user.changes(after: next, limit: 7)
            #expect(after.changes.isEmpty && !after.hasMore, "changes after the last cursor: \(describe(after.changes))")
            #expect(after.cursor == next, "the cursor moved without changes")
        }
    }
}
