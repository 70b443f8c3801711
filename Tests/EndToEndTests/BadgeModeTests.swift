import Foundation
import NotifyModels
import Testing

extension EndToEndTests {
    @Suite("badge modes")
    struct BadgeModeTests {
        private func setMode(_ app: TestApp, _ mode: BadgeMode) async throws {
            let answer = try await StackClient.send(
                .PATCH, "\(Stack.ingestURL)/v1/apps/\(app.appId)", bearer: Stack.adminToken, json: StackClient.encode(["badgeMode": mode.rawValue]))
            #expect(answer.status == 200, "\(answer.text)")
        }

        /// The `aps.badge` of each push `token` received about `id`, in order (nil: none).
        private func badges(at token: String, about id: String, count: Int) async throws -> [Int?] {
            try await Sandbox.waitForDeliveries(to: token) { $0.filter { $0.notificationId == id }.count >= count }
                .filter { $0.notificationId == id }.map { $0.payload["aps"]?["badge"]?.intValue }
        }

        @Test("external: the app server's number per user, a push's own number on that push, the number on a state change's push; refused in other modes")
        func external() async throws {
            let app = try await TestApp.create()
            let user = "user-\(uniqueSuffix())"
            let refused = try await app.appServer(.PUT, "/users/\(user)/badge", json: StackClient.encode(["badge": 7]))
            expectAPIError(refused, status: 409, field: "badgeMode", "setting a badge in the unread mode")
            try await setMode(app, .external)
            let phone = try await app.registerSubscribedDevice(of: user)
            let tablet = try await app.registerSubscribedDevice(of: user)
            let set = try await app.appServer(.PUT, "/users/\(user)/badge", json: StackClient.encode(["badge": 7]))
            #expect(set.status == 200, "\(set.text)")
            #expect(try await app.appServer(.GET, "/users/\(user)/badge").decode([String: Int].self) == ["badge": 7])
            let invalid = try await app.appServer(.PUT, "/users/\(user)/badge", json: StackClient.encode(["badge": -1]))
            expectAPIError(invalid, status: 400, field: "badge", "a negative badge")

            let counted = try await app.publishAccepted(.alert(to: user, title: "counted"))
            #expect(try await badges(at: phone.pushToken, about: counted, count: 1) == [7])
            let named = try await app.publishAccepted(.alert(to: user, push: PushOptions(badge: 3)))
            #expect(try await badges(at: phone.pushToken, about: named, count: 1) == [3])
            // Read on the phone: the tablet is pushed the change with the user's number.
            let reader = try await app.user(user)
            try await reader.patchAccepted(counted, StateChangeRequest(readState: .read), from: phone.subscriptionId)
            #expect(try await badges(at: tablet.pushToken, about: counted, count: 2) == [7, 7])
        }

        @Test("unreadGroups: each push carries the user's unread conversations (distinct groupNames, an ungrouped notification alone); a read of a conversation's last unread one lowers it")
        func unreadGroups() async throws {
            let app = try await TestApp.create()
            try await setMode(app, .unreadGroups)
            let user = "user-\(uniqueSuffix())"
            let phone = try await app.registerSubscribedDevice(of: user)
            func publish(group: String?) async throws -> String {
                try await app.publishAccepted(NotificationRequest(
                    userId: user, groupName: group, payload: NotificationPayload(visualContent: VisualContent(title: "in \(group ?? "no group")"))))
            }
            // One at a time, each push awaited: a batch's pushes carry the badge as of the whole batch.
            var seen: [Int?] = []
            var ids: [String] = []
            for group in ["chat-1", "chat-1", "chat-2", nil] {
                let id = try await publish(group: group)
                ids.append(id)
                seen += try await badges(at: phone.pushToken, about: id, count: 1)
            }
            #expect(seen == [1, 1, 2, 3])
            let reader = try await app.user(user)
            try await reader.patchAccepted(ids[2], StateChangeRequest(readState: .read))
            let after = try await publish(group: "chat-1")
            #expect(try await badges(at: phone.pushToken, about: after, count: 1) == [2], "chat-2 has no unread left")
        }

        @Test("a broadcast's pushes carry each member's badge in the unread and external modes")
        func broadcastBadges() async throws {
            let app = try await TestApp.create()
            let (alice, bob) = ("alice-\(uniqueSuffix())", "bob-\(uniqueSuffix())")
            let (alicePhone, bobPhone) = (randomHex(bytes: 32), randomHex(bytes: 32))
            try await app.openEventSource("news", members: [MemberDevice(userId: alice, pushToken: alicePhone), MemberDevice(userId: bob, pushToken: bobPhone)])
            let direct = try await app.publishAccepted(.alert(to: alice, title: "for Alice"))
            _ = try await badges(at: alicePhone, about: direct, count: 1)
            func broadcast() async throws -> String {
                try await app.publishAccepted(NotificationRequest(
                    eventSource: "news", payload: NotificationPayload(visualContent: VisualContent(title: "Breaking"))))
            }
            let counted = try await broadcast()
            #expect(try await badges(at: alicePhone, about: counted, count: 1) == [1], "unread: Alice's own notification")
            #expect(try await badges(at: bobPhone, about: counted, count: 1) == [0])

            try await setMode(app, .external)
            let set = try await app.appServer(.PUT, "/users/\(bob)/badge", json: StackClient.encode(["badge": 4]))
            #expect(set.status == 200, "\(set.text)")
            let external = try await broadcast()
            #expect(try await badges(at: bobPhone, about: external, count: 1) == [4], "external: the app server's number")
            #expect(try await badges(at: alicePhone, about: external, count: 1) == [0])
        }

        @Test("none: no push carries a badge, not even one the publish named")
        func none() async throws {
            let app = try await TestApp.create()
            try await setMode(app, .none)
            let user = "user-\(uniqueSuffix())"
            let token = try await app.registerDevice(of: user)
            let plain = try await app.publishAccepted(.alert(to: user, title: "plain"))
            let named = try await app.publishAccepted(.alert(to: user, push: PushOptions(badge: 4)))
            #expect(try await badges(at: token, about: plain, count: 1) == [nil])
            #expect(try await badges(at: token, about: named, count: 1) == [nil])
        }
    }
}
