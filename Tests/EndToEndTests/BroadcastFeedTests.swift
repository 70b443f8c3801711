import Foundation
import NotifyModels
import NotifyTestSupport
import Testing

extension EndToEndTests {
    @Suite("a broadcast in every member's feed")
    struct BroadcastFeedTests {
        private struct Registered: Decodable {
            var subscriptionId: String
        }

        /// A new APNs device of `user` in `source`: its push token and subscription id.
        private func member(_ app: TestApp, _ user: String, of source: String) async throws -> (token: String, subscriptionId: String) {
            let token = randomHex(bytes: 32)
            let answer = try await app.registerDevice(
                SubscriptionRequest(platform: .apns, pushToken: token, displayName: "e2e \(user)", eventSources: [source]),
                token: try await app.userToken(user))
            guard answer.status == 201 else { throw TestFailure("registering answered \(answer.status): \(answer.text)") }
            return (token, try answer.decode(Registered.self).subscriptionId)
        }

        /// The pushes `token` received about `notificationId`.
        private func pushes(to token: String, about notificationId: String, until done: @escaping ([Delivery]) -> Bool) async throws -> [Delivery] {
            try await Sandbox.waitForDeliveries(to: token) { done($0.filter { $0.notificationId == notificationId }) }
                .filter { $0.notificationId == notificationId }
        }

        @Test(
            "two users with two devices each see a broadcast in history, changes and by id, badge included; a read on one device reaches the other; the other user's copy stays unread; a device that joined later has none",
            .timeLimit(.minutes(3)))
        func readSyncsAcrossDevices() async throws {
            let app = try await TestApp.create()
            let counted = try await StackClient.send(
                .PATCH, "\(Stack.ingestURL)/v1/apps/\(app.appId)", bearer: Stack.adminToken,
                json: StackClient.encode(["badgeMode": BadgeMode.unreadIncludingBroadcasts.rawValue]))
            #expect(counted.status == 200, "\(counted.text)")
            let source = "news-\(uniqueSuffix())"
            let defined = try await app.appServer(.POST, "/event-sources", json: StackClient.encode(EventSourceRequest(name: source, policy: .open)))
            #expect(defined.status == 201, "\(defined.text)")
            let (userA, userB, userC) = ("alice-\(uniqueSuffix())", "bob-\(uniqueSuffix())", "carol-\(uniqueSuffix())")
            let a1 = try await member(app, userA, of: source), a2 = try await member(app, userA, of: source)
            let b1 = try await member(app, userB, of: source), b2 = try await member(app, userB, of: source)
            let alice = try await app.user(userA), bob = try await app.user(userB), carol = try await app.user(userC)
            // One notification sent to Alice herself: her badge counts it and the broadcast.
            let direct = try await app.publishAccepted(.alert(to: userA, title: "just for Alice"))
            _ = try await alice.waitForChanges(after: nil) { $0.contains { $0.notification.id.uuidString.lowercased() == direct } }
            let aliceBefore = try await alice.currentCursor()

            let broadcast = try await app.publishAccepted(NotificationRequest(
                eventSource: source, payload: NotificationPayload(visualContent: VisualContent(title: "Breaking", body: "news for members"))))
            let broadcastId = UUID(uuidString: broadcast)!

            // Each member user sees it: in the changes after its cursor (once), in history, and by id, unread.
            let members: [(UserClient, String?)] = [(alice, aliceBefore), (bob, nil)]
            for (user, cursor) in members {
                let changes = try await user.waitForChanges(after: cursor) { $0.contains { $0.notification.id == broadcastId } }
                let listed = changes.filter { $0.notification.id == broadcastId }
                #expect(listed.count == 1, "\(user.userId): \(describe(changes))")
                #expect(listed.first?.kind == .created && listed.first?.broadcastSequence != nil, "\(user.userId): \(describe(changes))")
                #expect(listed.first?.notification.eventSource == source)
                let history = try await user.history()
                #expect(history.notifications.contains { $0.id == broadcastId && $0.readState == .unread }, "\(user.userId)'s history")
                let byId = try await user.notification(broadcast)
                #expect(byId.status == 200, "\(user.userId): GET by id answered \(byId.status): \(byId.text)")
            }
            // A cursor that has listed the broadcast does not list it again.
            let (_, aliceAfter) = try await alice.allChanges(after: aliceBefore)
            #expect(try await alice.changes(after: aliceAfter).changes.isEmpty, "the broadcast was listed twice")

            // Every member device is pushed once, with its user's badge (Alice: her notification and the broadcast).
            for (device, badge) in [(a1, 2), (a2, 2), (b1, 1), (b2, 1)] {
                let pushed = try await pushes(to: device.token, about: broadcast) { !$0.isEmpty }
                #expect(pushed.count == 1, "device \(device.subscriptionId) got \(pushed.count) pushes of the broadcast")
                #expect(pushed.first?.payload["aps"]?["badge"]?.intValue == badge, "badge on \(device.subscriptionId): \(String(describing: pushed.first?.payload))")
            }

            // A device that joins the source after the broadcast: not pushed, not in its user's feed.
            let c1 = try await member(app, userC, of: source)
            #expect((try await carol.history()).notifications.isEmpty, "a member who joined later has the broadcast")
            #expect((try await carol.notification(broadcast)).status == 404)
            #expect((try await carol.allChanges(after: nil)).changes.isEmpty)

            // Alice reads it on her first device: her second device is pushed the change with the new badge, the first is not.
            try await alice.patchAccepted(broadcast, StateChangeRequest(readState: .read), from: a1.subscriptionId)
            let changed = try await pushes(to: a2.token, about: broadcast) { $0.count >= 2 }
            #expect(changed.count == 2, "Alice's other device got \(changed.count) pushes")
            #expect(changed.last?.payload["notify"]?["kind"]?.stringValue == ChangeKind.stateChanged.rawValue)
            #expect(changed.last?.payload["aps"]?["badge"]?.intValue == 1, "badge after the read: \(String(describing: changed.last?.payload))")
            #expect(try await Sandbox.deliveries(to: a1.token).filter { $0.notificationId == broadcast }.count == 1, "the reading device was pushed its own change")
            let read = try await alice.changes(after: aliceAfter).changes
            #expect(read.map(\.kind) == [.stateChanged] && read.first?.notification.readState == .read, "Alice's changes: \(describe(read))")
            #expect(try await alice.history().notifications.first { $0.id == broadcastId }?.readState == .read)

            // Bob's copy is his own: still unread, and nothing changed for him.
            let bobs = try await bob.notification(broadcast).decode(NotificationView.self)
            #expect(bobs.readState == .unread)
            #expect(try await Sandbox.deliveries(to: b2.token).filter { $0.notificationId == broadcast }.count == 1)
            #expect(try await Sandbox.deliveries(to: c1.token).isEmpty, "the device that joined later was pushed")

            // The app server reads the broadcast, but its state is each user's.
            #expect(try await app.appServer(.GET, "/notifications/\(broadcast)").status == 200)
            let refused = try await app.appServer(.PATCH, "/notifications/\(broadcast)", json: StackClient.encode(StateChangeRequest(readState: .read)))
            expectAPIError(refused, status: 409, field: "id", "the app server changing a broadcast's state")

            // Alice deletes it: gone from her history, listed as deleted, still in Bob's.
            let deleted = try await alice.delete(broadcast, from: a1.subscriptionId)
            #expect(deleted.status == 204 || deleted.status == 202, "\(deleted.text)")
            let afterDelete = try await alice.waitForChanges(after: aliceAfter) { $0.contains { $0.kind == .deleted } }
            #expect(afterDelete.last?.kind == .deleted && afterDelete.last?.notification.id == broadcastId, "\(describe(afterDelete))")
            #expect(try await alice.history().notifications.allSatisfy { $0.id != broadcastId })
            #expect(try await bob.history().notifications.contains { $0.id == broadcastId })
        }

        @Test(
            "a broadcast past its expiration reaches every member's next sync as one expired change, after their cursors, and each member device is pushed the expiry; a broadcast that stays is not listed again",
            .timeLimit(.minutes(2)))
        func expiryIsSynced() async throws {
            let app = try await TestApp.create()
            let source = "news-\(uniqueSuffix())"
            let defined = try await app.appServer(.POST, "/event-sources", json: StackClient.encode(EventSourceRequest(name: source, policy: .open)))
            #expect(defined.status == 201, "\(defined.text)")
            let (userA, userB) = ("alice-\(uniqueSuffix())", "bob-\(uniqueSuffix())")
            let a1 = try await member(app, userA, of: source), b1 = try await member(app, userB, of: source)
            let alice = try await app.user(userA), bob = try await app.user(userB)
            let staying = try await app.publishAccepted(NotificationRequest(
                eventSource: source, payload: NotificationPayload(visualContent: VisualContent(title: "Stays"))))
            var request = NotificationRequest(eventSource: source, payload: NotificationPayload(visualContent: VisualContent(title: "Expires soon")))
            request.expirationDateTime = Date().addingTimeInterval(3)
            let expiring = try await app.publishAccepted(request)
            let expiringId = UUID(uuidString: expiring)!

            var cursors: [(UserClient, String)] = []
            for user in [alice, bob] {
                _ = try await user.waitForChanges(after: nil) { $0.count >= 2 }
                cursors.append((user, try await user.currentCursor()))
            }
            // The sweeper runs every 5 s: the expiry shows within ~3 s + 5 s + processing.
            for (user, cursor) in cursors {
                let changes = try await user.waitForChanges(after: cursor, timeout: .seconds(20)) { !$0.isEmpty }
                #expect(changes.map(\.kind) == [.expired], "\(user.userId): changes after the expiration: \(describe(changes))")
                #expect(changes.first?.notification.id == expiringId && changes.first?.notification.status == .expired)
                #expect(changes.first?.broadcastSequence != nil)
                let (_, after) = try await user.allChanges(after: cursor)
                #expect(try await user.changes(after: after).changes.isEmpty, "\(user.userId): the expiry was listed twice")
                let history = try await user.history()
                #expect(history.notifications.map { $0.id.uuidString.lowercased() } == [staying], "\(user.userId)'s history")
            }
            // Each member device is pushed the expiry (a background push), as a notification's expiry pushes its user's devices.
            for device in [a1, b1] {
                let pushed = try await pushes(to: device.token, about: expiring) { $0.count >= 2 }
                #expect(pushed.count == 2, "device \(device.subscriptionId) got \(pushed.count) pushes of the broadcast")
                #expect(pushed.last?.payload["notify"]?["kind"]?.stringValue == ChangeKind.expired.rawValue, "\(String(describing: pushed.last?.payload))")
            }
        }

        @Test(
            "a user whose device leaves the source, and one the app server takes out of it, each get a removed change for its broadcast after their cursors, and their history drops it; a member who stays keeps it with no change",
            .timeLimit(.minutes(2)))
        func leavingRemoves() async throws {
            let app = try await TestApp.create()
            let source = "news-\(uniqueSuffix())"
            let defined = try await app.appServer(.POST, "/event-sources", json: StackClient.encode(EventSourceRequest(name: source, policy: .open)))
            #expect(defined.status == 201, "\(defined.text)")
            let (userA, userB, userC) = ("alice-\(uniqueSuffix())", "bob-\(uniqueSuffix())", "carol-\(uniqueSuffix())")
            let a1 = try await member(app, userA, of: source)
            _ = try await member(app, userB, of: source)
            _ = try await member(app, userC, of: source)
            let alice = try await app.user(userA), bob = try await app.user(userB), carol = try await app.user(userC)
            let broadcast = try await app.publishAccepted(NotificationRequest(
                eventSource: source, payload: NotificationPayload(visualContent: VisualContent(title: "Members only"))))
            let broadcastId = UUID(uuidString: broadcast)!
            var cursors: [String: String] = [:]
            for user in [alice, bob, carol] {
                _ = try await user.waitForChanges(after: nil) { $0.contains { $0.notification.id == broadcastId } }
                cursors[user.userId] = try await user.currentCursor()
            }

            // Alice's only device leaves the source; the app server takes Bob out of it.
            let left = try await StackClient.send(
                .DELETE, "\(Stack.ingestURL)/v1/me/subscriptions/\(a1.subscriptionId)/event-sources/\(source)", bearer: try await app.userToken(userA))
            #expect(left.status == 204, "\(left.text)")
            let removedByApp = try await StackClient.send(
                .DELETE, "\(Stack.ingestURL)/v1/apps/\(app.appId)/users/\(userB)/event-sources/\(source)", bearer: app.apiKey)
            #expect(removedByApp.status == 200, "\(removedByApp.text)")
            for user in [alice, bob] {
                let cursor = cursors[user.userId]
                let changes = try await user.waitForChanges(after: cursor) { !$0.isEmpty }
                #expect(changes.map(\.kind) == [.removed], "\(user.userId): \(describe(changes))")
                #expect(changes.first?.notification.id == broadcastId && changes.first?.broadcastSequence == nil)
                let (_, after) = try await user.allChanges(after: cursor)
                #expect(try await user.changes(after: after).changes.isEmpty, "\(user.userId): the removal was listed twice")
                #expect(try await user.history().notifications.isEmpty, "\(user.userId)'s history keeps the broadcast")
            }
            // Carol stays a member: her feed did not change.
            #expect(try await carol.changes(after: cursors[userC]).changes.isEmpty)
            #expect(try await carol.history().notifications.map(\.id) == [broadcastId])
        }
    }
}
