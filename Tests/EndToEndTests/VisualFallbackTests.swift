import Foundation
import NotifyModels
import Testing

extension EndToEndTests {
    @Suite("the raw-to-visual fallback on iOS")
    struct VisualFallbackTests {
        /// The fallback delay test.sh gives the stack's fanout (NOTIFY_VISUAL_FALLBACK_SECONDS).
        private static let delay = Double(ProcessInfo.processInfo.environment["NOTIFY_VISUAL_FALLBACK_SECONDS"] ?? "") ?? 30

        private struct Page: Decodable {
            var changes: [NotificationChange]
        }

        @Test("a notification with raw and visual content reaches an iOS device as a shoulder tap; a device that syncs in time gets no alert, one that does not gets exactly one",
              .enabled(if: delay <= 10, "needs a short NOTIFY_VISUAL_FALLBACK_SECONDS (test.sh sets 3)"), .timeLimit(.minutes(2)))
        func alertFollowsOnlyWhenNotSynced() async throws {
            let app = try await TestApp.create()
            let (syncing, idle) = ("user-\(uniqueSuffix())", "user-\(uniqueSuffix())")
            let syncingDevice = try await app.registerSubscribedDevice(of: syncing)
            let idleDevice = try await app.registerSubscribedDevice(of: idle)
            var payload = NotificationPayload(rawContent: "order 42 shipped", visualContent: VisualContent(title: "Order shipped", body: "On its way"))
            _ = try await app.publishAccepted(NotificationRequest(userId: syncing, payload: payload))
            payload.rawContent = "order 43 shipped"
            _ = try await app.publishAccepted(NotificationRequest(userId: idle, payload: payload))

            for device in [syncingDevice, idleDevice] {
                let tap = try #require(try await Sandbox.waitForDeliveries(to: device.pushToken) { !$0.isEmpty }.first)
                #expect(tap.headers["apns-push-type"] == "background" && tap.payload["aps"]?["alert"] == nil, "first a shoulder tap: \(tap.payload)")
                #expect(tap.payload["aps"]?["content-available"]?.intValue == 1)
            }
            // The syncing device reads its changes (naming itself, as the client library does) right after the tap.
            let read = try await StackClient.send(
                .GET, "\(Stack.ingestURL)/v1/me/notifications/changes", bearer: try await app.userToken(syncing),
                headers: ["X-Subscription-Id": syncingDevice.subscriptionId])
            #expect(try read.decode(Page.self).changes.count == 1)

            let alert = try await Sandbox.waitForDeliveries(to: idleDevice.pushToken, timeout: .seconds(Self.delay + 20)) { $0.count >= 2 }
            #expect(alert.count == 2, "the device that did not sync gets the alert")
            #expect(alert.last?.headers["apns-push-type"] == "alert" && alert.last?.payload["aps"]?["alert"]?["title"]?.stringValue == "Order shipped")
            // Both fallbacks were due at about the same time: the synced device's would have arrived by now.
            try await Task.sleep(for: .seconds(2))
            let quiet = try await Sandbox.deliveries(to: syncingDevice.pushToken)
            #expect(quiet.count == 1, "the device that synced in time gets no alert: \(quiet.map(\.headers))")
            #expect(try await Sandbox.deliveries(to: idleDevice.pushToken).count == 2, "exactly one alert")
        }
    }
}
