import Foundation
import NotifyModels
import Testing

extension EndToEndTests {
    @Suite("a user's devices changing between notifications")
    struct DeviceSetTests {
        @Test("each publish reaches the devices the user has at that moment: one registered since the last is added, one removed is left out")
        func publishesFollowRegistrations() async throws {
            let app = try await TestApp.create()
            let user = "user-\(uniqueSuffix())"
            let phone = try await app.registerSubscribedDevice(of: user)

            let first = try await app.publishAccepted(.alert(to: user, title: "first"))
            #expect(try await Sandbox.missingNotifications([first], at: phone.pushToken).isEmpty, "the phone did not get the first notification")

            let tablet = try await app.registerDevice(of: user)
            let second = try await app.publishAccepted(.alert(to: user, title: "second"))
            for device in [phone.pushToken, tablet] {
                #expect(try await Sandbox.missingNotifications([second], at: device).isEmpty, "\(device) did not get the second notification")
            }

            let removed = try await StackClient.send(
                .DELETE, "\(Stack.ingestURL)/v1/me/subscriptions/\(phone.subscriptionId)", bearer: try await app.userToken(user))
            #expect(removed.status == 204, "\(removed.text)")
            let third = try await app.publishAccepted(.alert(to: user, title: "third"))
            #expect(try await Sandbox.missingNotifications([third], at: tablet).isEmpty, "the tablet did not get the third notification")
            // A push to the removed phone would have gone out with the tablet's; give it a moment to show.
            try await Task.sleep(for: .seconds(1))
            #expect(try await Sandbox.deliveries(to: phone.pushToken).map(\.notificationId) == [first, second])
            #expect(try await Sandbox.deliveries(to: tablet).map(\.notificationId) == [second, third])
        }
    }
}
