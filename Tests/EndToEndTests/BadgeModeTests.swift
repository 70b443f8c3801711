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
