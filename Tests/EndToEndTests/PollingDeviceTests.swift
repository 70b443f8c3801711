import Foundation
import NotifyModels
import Testing

extension EndToEndTests {
    @Suite("polling devices")
    struct PollingDeviceTests {
        private struct Registered: Decodable {
            var subscriptionId: String
            var expirationDateTime: Date
        }

        @Test("a device without a push channel registers as polling, is never pushed, names itself in the changes it makes (the user's other devices are pushed them) and renews its registration")
        func pollingDevice() async throws {
            let app = try await TestApp.create()
            let user = "user-\(uniqueSuffix())"
            let phone = try await app.registerSubscribedDevice(of: user)
            let token = try await app.userToken(user)
            let first = try await app.registerDevice(SubscriptionRequest(platform: .polling, displayName: "e2e watch"), token: token)
            #expect(first.status == 201 || first.status == 202, "\(first.text)")
            let watch = try first.decode(Registered.self)

            let id = try await app.publishAccepted(.alert(to: user, title: "to every device"))
            #expect(try await Sandbox.missingNotifications([id], at: phone.pushToken).isEmpty)
            let log = try await app.deliveryLog(of: id) { !$0.isEmpty }
            #expect(log.map(\.subscriptionId) == [phone.subscriptionId], "only the phone was pushed: \(log)")

            // The watch reads the feed and marks the notification read, naming itself: the phone is pushed the change.
            let reader = try await app.user(user)
            _ = try await reader.waitForChanges(after: nil) { $0.contains { $0.notification.id.uuidString.lowercased() == id } }
            try await reader.patchAccepted(id, StateChangeRequest(readState: .read), from: watch.subscriptionId)
            let pushed = try await Sandbox.waitForDeliveries(to: phone.pushToken) { $0.filter { $0.notificationId == id }.count >= 2 }
            #expect(pushed.filter { $0.notificationId == id }.count == 2, "the alert, then the read")
            let delivered = try await app.deliveryLog(of: id) { $0.count >= 2 }
            #expect(!delivered.contains { $0.subscriptionId == watch.subscriptionId }, "the watch was never pushed")

            // Registering again with its id renews the same registration.
            let renewal = try await app.registerDevice(SubscriptionRequest(platform: .polling, pushToken: watch.subscriptionId), token: token)
            let renewed = try renewal.decode(Registered.self)
            #expect(renewed.subscriptionId == watch.subscriptionId)
            #expect(renewed.expirationDateTime > watch.expirationDateTime, "the renewal moves the expiry on")
        }
    }
}
