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
                data: ["category": .string("x"), "title": .string("y"), "aps": .string("a"), "notify": .number(1)]))
    }

    private static func json(_ bytes: [UInt8]) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    @Test("the app's keys sit under data whatever their names, aps and notify included; aps keeps the push's own category and sound")
    func appDataUnderData() throws {
        let payload = try Self.json(APNsPayloadBuilder.payload(for: Self.content(visual: true), marker: Self.marker, badge: 1))
        let data = try #require(payload["data"] as? [String: Any])
        #expect(data["category"] as? String == "x" && data["title"] as? String == "y" && data["aps"] as? String == "a" && data["notify"] as? Int == 1)
        #expect(payload["title"] == nil && payload["category"] == nil, "the top level is notify's")
        let aps = try #require(payload["aps"] as? [String: Any])
        #expect(aps["category"] as? String == "c" && aps["sound"] as? String == "s.caf")
        #expect((aps["alert"] as? [String: String])?["title"] == "T")
    }

    @Test("a VoIP payload keeps its alert text at the top level and the app's data, alert included, under data")
    func voipAppData() throws {
        var content = Self.content(visual: true)
        content.push?.data = ["alert": .string("app's")]
        let payload = try Self.json(APNsPayloadBuilder.voipPayload(for: content, marker: Self.marker))
        #expect((payload["alert"] as? [String: String])?["title"] == "T")
        #expect((payload["data"] as? [String: String])?["alert"] == "app's")
    }

    @Test("an alert's deep link is aps.target-content-id and notify.url; a shoulder tap carries neither")
    func deepLink() throws {
        let alert = try Self.json(APNsPayloadBuilder.payload(for: Self.content(visual: true), marker: Self.marker, badge: nil))
        #expect((alert["aps"] as? [String: Any])?["target-content-id"] as? String == "myapp://orders/42")
        #expect((alert["notify"] as? [String: Any])?["url"] as? String == "myapp://orders/42")
        #expect((alert["notify"] as? [String: Any])?["id"] as? String == Self.marker.notificationId.lowercasedString)
        #expect(alert["url"] == nil && (alert["data"] as? [String: Any])?["url"] == nil, "the link is notify's, not the app's data")
        let tap = try Self.json(APNsPayloadBuilder.payload(for: Self.content(visual: false), marker: Self.marker, badge: nil))
        #expect((tap["aps"] as? [String: Any])?["target-content-id"] == nil && (tap["notify"] as? [String: Any])?["url"] == nil)
        #expect((tap["data"] as? [String: Any])?["title"] as? String == "y", "the app's data goes with a shoulder tap too")
    }
}
