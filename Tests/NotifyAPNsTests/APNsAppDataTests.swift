import Foundation
import NotifyModels
import Testing

@testable import NotifyAPNsCore

/// The app's data and the deep link in an APNs payload.
@Suite("APNs: the app's data and the deep link")
struct APNsAppDataTests {
    private static let marker = PushMarker(notificationId: UUID(), sequence: 3, kind: .created)

    private static func content(visual: Bool) -> NotificationContent {
        NotificationContent(
            appNotificationId: nil, groupName: nil, priority: .high, expirationDateTime: Date(), displayTimeToLive: nil, platformTypes: nil,
            payload: NotificationPayload(rawContent: "{}", visualContent: visual ? VisualContent(title: "T", body: "B") : nil),
            push: PushOptions(
                sound: "s.caf", category: "c", url: "myapp://orders/42",
                data: ["category": .string("x"), "title": .string("y"), "sound": .string("z")]))
    }

    private static func json(_ bytes: [UInt8]) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    @Test("the app's keys sit at the top level beside aps, whatever their names; aps keeps the push's own category and sound")
    func appDataBesideAps() throws {
        let payload = try Self.json(APNsPayloadBuilder.payload(for: Self.content(visual: true), marker: Self.marker, badge: 1))
        #expect(payload["category"] as? String == "x" && payload["title"] as? String == "y" && payload["sound"] as? String == "z")
        let aps = try #require(payload["aps"] as? [String: Any])
        #expect(aps["category"] as? String == "c" && aps["sound"] as? String == "s.caf")
        #expect((aps["alert"] as? [String: String])?["title"] == "T")
    }

    @Test("an alert's deep link is aps.target-content-id and notify.url; a shoulder tap carries neither")
    func deepLink() throws {
        let alert = try Self.json(APNsPayloadBuilder.payload(for: Self.content(visual: true), marker: Self.marker, badge: nil))
        #expect((alert["aps"] as? [String: Any])?["target-content-id"] as? String == "myapp://orders/42")
        #expect((alert["notify"] as? [String: Any])?["url"] as? String == "myapp://orders/42")
        #expect((alert["notify"] as? [String: Any])?["id"] as? String == Self.marker.notificationId.lowercasedString)
        #expect(alert["url"] == nil, "the top level is the app's")
        let tap = try Self.json(APNsPayloadBuilder.payload(for: Self.content(visual: false), marker: Self.marker, badge: nil))
        #expect((tap["aps"] as? [String: Any])?["target-content-id"] == nil && (tap["notify"] as? [String: Any])?["url"] == nil)
        #expect(tap["title"] as? String == "y", "the app's data goes with a shoulder tap too")
    }
}
