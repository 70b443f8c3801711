import Foundation
import NotifyModels
import Testing

extension EndToEndTests {
    /// "Handled once, dismissed everywhere": three APNs devices of one user follow each other's state changes,
    /// the app server's deletes and replacements.
    @Suite("syncing state across a user's devices")
    struct SyncTests {
        /// An app, a user and three registered devices A, B and C.
        struct ThreeDevices {
            var app: TestApp
            var user: UserClient
            var devices: [(name: String, pushToken: String, subscriptionId: String)]

            static func make() async throws -> ThreeDevices {
                let app = try await TestApp.create()
                let userId = "user-\(uniqueSuffix())"
                var devices: [(name: String, pushToken: String, subscriptionId: String)] = []
                for name in ["A", "B", "C"] {
                    let device = try await app.registerSubscribedDevice(of: userId)
                    devices.append((name, device.pushToken, device.subscriptionId))
                }
                return ThreeDevices(app: app, user: try await app.user(userId), devices: devices)
            }

            /// Waits until every device has `count` pushes; records an issue for each one that has not, and returns them all by name.
            func waitForPushes(_ count: Int, timeout: Duration = .seconds(20), sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: [Delivery]] {
                var result: [String: [Delivery]] = [:]
                for device in devices {
                    let deliveries = try await Sandbox.waitForDeliveries(to: device.pushToken, timeout: timeout) { $0.count >= count }
                    #expect(deliveries.count >= count, "device \(device.name) has \(deliveries.count) pushes, expected \(count) within \(timeout)", sourceLocation: sourceLocation)
                    result[device.name] = deliveries
                }
                return result
            }
        }

        /// Checks a background shoulder tap of `kind` for notification `id` at `sequence`.
        static func expectBackgroundPush(
            _ push: Delivery?, kind: String, id: String, sequence: Int, _ device: String, sourceLocation: SourceLocation = #_sourceLocation
        ) {
            guard let push else {
                Issue.record("device \(device) got no \(kind) push", sourceLocation: sourceLocation)
                return
            }
            #expect(push.headers["apns-push-type"] == "background", "device \(device): apns-push-type of \(push.payload)", sourceLocation: sourceLocation)
            #expect(push.headers["apns-priority"] == "5", "device \(device): apns-priority", sourceLocation: sourceLocation)
            #expect(push.payload["aps"]?["content-available"]?.numberValue == 1, "device \(device): aps.content-available in \(push.payload)", sourceLocation: sourceLocation)
            #expect(push.payload["aps"]?["alert"] == nil, "device \(device): a background push has no alert: \(push.payload)", sourceLocation: sourceLocation)
            #expect(push.payload["notify"]?["kind"]?.stringValue == kind, "device \(device): notify.kind in \(push.payload)", sourceLocation: sourceLocation)
            #expect(push.payload["notify"]?["id"]?.stringValue == id, "device \(device): notify.id", sourceLocation: sourceLocation)
            #expect(push.payload["notify"]?["seq"]?.numberValue == Double(sequence), "device \(device): notify.seq in \(push.payload)", sourceLocation: sourceLocation)
        }

        @Test("dismissed on A: B and C get a background stateChanged push, A gets none, sync shows it dismissed")
        func dismissOnOneDeviceReachesTheOthers() async throws {
            let setup = try await ThreeDevices.make()
            let id = try await setup.app.publishAccepted(.alert(to: setup.user.userId, title: "Meeting moved"))
            let alerts = try await setup.waitForPushes(1)
            for device in setup.devices {
                let push = alerts[device.name]?.first
                #expect(push?.headers["apns-push-type"] == "alert", "device \(device.name): the publish is an alert")
                #expect(push?.notificationId == id)
                #expect(push?.payload["notify"]?["kind"]?.stringValue == "created")
            }

            let deviceA = setup.devices[0]
            let answer = try await setup.user.patch(id, StateChangeRequest(userActionState: .dismissed), from: deviceA.subscriptionId)
            #expect(answer.status == 200, "PATCH dismissed: \(answer.status) \(answer.text)")
            if answer.status == 200 {
                let view = try answer.decode(NotificationView.self)
                #expect(view.userActionState == .dismissed)
                #expect(view.status == .active, "dismissed is not deleted")
                #expect(view.sequence == 2)
            }

            for device in setup.devices.dropFirst() {
                let deliveries = try await Sandbox.waitForDeliveries(to: device.pushToken) { $0.count >= 2 }
                #expect(deliveries.count == 2, "device \(device.name): expected the alert and one state change push: \(deliveries.map(\.payload))")
                Self.expectBackgroundPush(deliveries.dropFirst().first, kind: "stateChanged", id: id, sequence: 2, device.name)
            }
            // B and C have theirs; a push to A would have gone out in the same batch.
            try await Task.sleep(for: .seconds(1.5))
            let atA = try await Sandbox.deliveries(to: deviceA.pushToken)
            #expect(atA.count == 1, "device A, which dismissed, was pushed its own change: \(atA.map(\.payload))")

            let changes = try await setup.user.allChanges(after: nil).changes
            #expect(changes.map(\.sequence) == [1, 2], "changes: \(describe(changes))")
            #expect(changes.map(\.kind) == [.created, .stateChanged], "changes: \(describe(changes))")
            #expect(changes.last?.notification.id.uuidString.lowercased() == id)
            #expect(changes.last?.notification.userActionState == .dismissed)
            #expect(changes.last?.notification.status == .active)
        }

        @Test("read on B: A and C are pushed the new unread count as the badge")
        func readOnOneDeviceUpdatesTheBadgeOfTheOthers() async throws {
            let setup = try await ThreeDevices.make()
            let first = try await setup.app.publishAccepted(.alert(to: setup.user.userId, title: "first"))
            _ = try await setup.waitForPushes(1)
            let second = try await setup.app.publishAccepted(.alert(to: setup.user.userId, title: "second"))
            let alerts = try await setup.waitForPushes(2)
            for device in setup.devices {
                #expect(alerts[device.name]?.map { $0.payload["aps"]?["badge"]?.numberValue } == [1, 2], "device \(device.name): badges of the two alerts")
            }

            let deviceB = setup.devices[1]
            try await setup.user.patchAccepted(first, StateChangeRequest(readState: .read), from: deviceB.subscriptionId)

            for device in [setup.devices[0], setup.devices[2]] {
                let deliveries = try await Sandbox.waitForDeliveries(to: device.pushToken) { $0.count >= 3 }
                let push = deliveries.count >= 3 ? deliveries[2] : nil
                Self.expectBackgroundPush(push, kind: "stateChanged", id: first, sequence: 3, device.name)
                #expect(push?.payload["aps"]?["badge"]?.numberValue == 1, "device \(device.name): the badge after reading one of two: \(push.map { "\($0.payload)" } ?? "no push")")
            }
            try await Task.sleep(for: .seconds(1.5))
            let atB = try await Sandbox.deliveries(to: deviceB.pushToken)
            #expect(atB.count == 2, "device B, which read, was pushed its own change: \(atB.map(\.payload))")

            let history = try await setup.user.history()
            let states = Dictionary(uniqueKeysWithValues: history.notifications.map { ($0.id.uuidString.lowercased(), $0.readState) })
            #expect(states == [first: .read, second: .unread])
            let unread = try await setup.user.history(query: "readState=unread")
            #expect(unread.notifications.map { $0.id.uuidString.lowercased() } == [second], "history filtered by readState=unread")
        }

        @Test("the badge follows reads, deletes and a revived replacement, and the kept counts match a recount of every user")
        func badgeFollowsEveryKindOfChange() async throws {
            let app = try await TestApp.create()
            let userId = "user-\(uniqueSuffix())"
            let device = try await app.registerSubscribedDevice(of: userId)
            let user = try await app.user(userId)
            var revived = NotificationRequest.alert(to: userId, title: "read, then replaced")
            revived.appNotificationId = "revived-\(uniqueSuffix())"
            let first = try await app.publishAccepted(revived)
            let second = try await app.publishAccepted(.alert(to: userId, title: "deleted"))
            _ = try await app.publishAccepted(.alert(to: userId, title: "kept"))
            _ = try await Sandbox.waitForDeliveries(to: device.pushToken) { $0.count >= 3 }

            try await user.patchAccepted(first, StateChangeRequest(readState: .read))
            let deleted = try await app.appServer(.DELETE, "/notifications/\(second)")
            #expect(deleted.status == 204, "DELETE: \(deleted.status) \(deleted.text)")
            var pushes = try await Sandbox.waitForDeliveries(to: device.pushToken) { $0.count >= 5 }
            #expect(pushes.dropFirst(3).map { $0.payload["aps"]?["badge"]?.numberValue } == [2, 1], "badges after the read and the delete")

            revived.payload = NotificationPayload(visualContent: VisualContent(title: "replaced, unread again"))
            #expect(try await app.publishAccepted(revived) == first)
            pushes = try await Sandbox.waitForDeliveries(to: device.pushToken) { $0.count >= 6 }
            #expect(pushes.dropFirst(5).first?.payload["aps"]?["badge"]?.numberValue == 2, "the replacement is unread again: \(pushes.map(\.payload))")

            try await Database.inspecting { inspection in
                let kept = try await inspection.keptUnreadCount(appId: app.appId, userId: userId)
                #expect(kept == 2)
                // One snapshot: every user's kept count against a recount (a missing row counts as 0).
                let mismatched = try await inspection.miscountedUnreadUsers()
                #expect(mismatched == 0, "users whose kept unread count differs from a recount")
            }
        }

        @Test("deleted by the app server (by id and by appNotificationId): devices are tapped, the tombstone syncs, history drops it")
        func deleteByTheAppServerSyncsATombstone() async throws {
            let setup = try await ThreeDevices.make()
            let userId = setup.user.userId
            let byId = try await setup.app.publishAccepted(.alert(to: userId, title: "deleted by id"))
            var request = NotificationRequest.alert(to: userId, title: "deleted by appNotificationId")
            let appNotificationId = "order-\(uniqueSuffix())"
            request.appNotificationId = appNotificationId
            let byAppId = try await setup.app.publishAccepted(request)
            _ = try await setup.waitForPushes(2)
            let cursor = try await setup.user.currentCursor()

            let deleted = try await setup.app.appServer(.DELETE, "/notifications/\(byId)")
            #expect(deleted.status == 204, "DELETE by id: \(deleted.status) \(deleted.text)")
            let taps = try await setup.waitForPushes(3)
            for device in setup.devices {
                let push = (taps[device.name]?.count ?? 0) >= 3 ? taps[device.name]?[2] : nil
                Self.expectBackgroundPush(push, kind: "deleted", id: byId, sequence: 3, device.name)
            }
            var changes = try await setup.user.waitForChanges(after: cursor) { !$0.isEmpty }
            #expect(changes.map(\.kind) == [.deleted], "changes after the delete: \(describe(changes))")
            if let tombstone = changes.first {
                #expect(tombstone.sequence == 3)
                #expect(tombstone.notification.id.uuidString.lowercased() == byId)
                #expect(tombstone.notification.status == .deleted)
                #expect(tombstone.notification.payload == nil, "a tombstone keeps no content")
            }
            var history = try await setup.user.history()
            #expect(history.notifications.map { $0.id.uuidString.lowercased() } == [byAppId], "history after the delete")
            let gone = try await setup.user.notification(byId)
            #expect(gone.status == 200 || gone.status == 404, "GET a deleted notification: \(gone.status)")
            let again = try await setup.app.appServer(.DELETE, "/notifications/\(byId)")
            #expect(again.status == 404, "deleting it again: \(again.status) \(again.text)")

            let byOwnId = try await setup.app.appServer(.DELETE, "/users/\(userId)/notifications/\(appNotificationId)")
            #expect(byOwnId.status == 204, "DELETE by appNotificationId: \(byOwnId.status) \(byOwnId.text)")
            let moreTaps = try await setup.waitForPushes(4)
            for device in setup.devices {
                let push = (moreTaps[device.name]?.count ?? 0) >= 4 ? moreTaps[device.name]?[3] : nil
                Self.expectBackgroundPush(push, kind: "deleted", id: byAppId, sequence: 4, device.name)
            }
            changes = try await setup.user.waitForChanges(after: cursor) { $0.count >= 2 }
            #expect(changes.map(\.sequence) == [3, 4], "changes after both deletes: \(describe(changes))")
            #expect(changes.map(\.kind) == [.deleted, .deleted])
            #expect(changes.last?.notification.id.uuidString.lowercased() == byAppId)
            #expect(changes.last?.notification.status == .deleted)
            history = try await setup.user.history()
            #expect(history.notifications.isEmpty, "history after both deletes: \(history.notifications.map(\.id))")
        }

        @Test("publishing again with the same appNotificationId replaces: same id, kind updated, a second alert, one notification")
        func replaceByAppNotificationId() async throws {
            let app = try await TestApp.create()
            let userId = "user-\(uniqueSuffix())"
            let device = try await app.registerDevice(of: userId)
            let user = try await app.user(userId)
            let appNotificationId = "score-\(uniqueSuffix())"
            var request = NotificationRequest.alert(to: userId, title: "1 : 0")
            request.appNotificationId = appNotificationId
            let first = try await app.publishAccepted(request)
            _ = try await Sandbox.waitForDeliveries(to: device) { !$0.isEmpty }
            let cursor = try await user.currentCursor()

            request.payload = NotificationPayload(visualContent: VisualContent(title: "2 : 0", body: "goal"))
            let second = try await app.publishAccepted(request)
            #expect(second == first, "the replacement got another id")

            let deliveries = try await Sandbox.waitForDeliveries(to: device) { $0.count >= 2 }
            #expect(deliveries.count == 2, "expected two alerts: \(deliveries.map(\.payload))")
            if deliveries.count >= 2 {
                let push = deliveries[1]
                #expect(push.headers["apns-push-type"] == "alert")
                #expect(push.headers["apns-collapse-id"] == first, "the replacement collapses onto the first alert")
                #expect(push.payload["aps"]?["alert"]?["title"]?.stringValue == "2 : 0")
                #expect(push.payload["notify"]?["kind"]?.stringValue == "updated")
                #expect(push.payload["notify"]?["id"]?.stringValue == first)
                #expect(push.payload["notify"]?["seq"]?.numberValue == 2)
                #expect(push.payload["aps"]?["badge"]?.numberValue == 1, "still one unread notification")
            }
            let changes = try await user.waitForChanges(after: cursor) { !$0.isEmpty }
            #expect(changes.map(\.kind) == [.updated], "changes after the replacement: \(describe(changes))")
            #expect(changes.first?.notification.payload?.visualContent?.title == "2 : 0")
            #expect(changes.first?.notification.appNotificationId == appNotificationId)
            let history = try await user.history()
            #expect(history.notifications.count == 1, "history: \(history.notifications.map { ($0.id, $0.payload?.visualContent?.title) })")
            #expect(history.notifications.first?.payload?.visualContent?.title == "2 : 0")
        }

        @Test("groupName filters history and changes (deletions always pass)")
        func groupNameFilters() async throws {
            let app = try await TestApp.create()
            let userId = "grouped-\(uniqueSuffix())"
            let user = try await app.user(userId)
            let orders = try await app.publishAccepted(NotificationRequest(
                userId: userId, groupName: "orders", payload: NotificationPayload(visualContent: VisualContent(title: "Shipped"))))
            _ = try await app.publishAccepted(NotificationRequest(
                userId: userId, groupName: "chat", payload: NotificationPayload(visualContent: VisualContent(title: "Hi"))))
            _ = try await user.waitForChanges(after: nil) { $0.count == 2 }
            let history = try await user.history(query: "groupName=orders")
            #expect(history.notifications.map { $0.id.uuidString.lowercased() } == [orders])
            let answer = try await user.changesAnswer(query: "groupName=orders")
            let changes = try answer.decode(ChangePage.self).changes
            #expect(changes.map { $0.notification.id.uuidString.lowercased() } == [orders], "\(describe(changes))")
        }
    }
}
