import Foundation
import NotifyModels
import Testing

@testable import NotifyAPNsCore

/// A push's own title and body (a recipient's text) in the APNs payloads.
@Suite("APNs: a push's own alert text")
struct APNsAlertTextTests {
    private static func content(visual: VisualContent?, push: PushOptions?) -> NotificationContent {
        NotificationContent(
            appNotificationId: nil, groupName: nil, priority: .high, expirationDateTime: Date(), displayTimeToLive: nil, platformTypes: nil,
            payload: NotificationPayload(rawContent: "{}", visualContent: visual), push: push)
    }

    private static func json(_ bytes: [UInt8]) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    private static let marker = PushMarker(notificationId: UUID(), sequence: 3, kind: .created)

    @Test("aps.alert shows the push's title and body over the visual content's, each on its own, beside the subtitle")
    func alertShowsThePushText() throws {
        let visual = VisualContent(title: "New message", body: "in room 7")
        let both = try Self.json(APNsPayloadBuilder.payload(
            for: Self.content(visual: visual, push: PushOptions(title: "hey user1", subtitle: "from Ana", body: "alert")), marker: Self.marker, badge: nil))
        let alert = (both["aps"] as? [String: Any])?["alert"] as? [String: String]
        #expect(alert == ["title": "hey user1", "subtitle": "from Ana", "body": "alert"])
        let titleOnly = try Self.json(APNsPayloadBuilder.payload(
            for: Self.content(visual: visual, push: PushOptions(title: "hey user2")), marker: Self.marker, badge: nil))
        #expect((titleOnly["aps"] as? [String: Any])?["alert"] as? [String: String] == ["title": "hey user2", "body": "in room 7"])
    }

    @Test("raw content with the push's own text is an alert of that text (as Layer pushes it); silent stays a background push")
    func rawContentWithTextIsAnAlert() throws {
        let alert = try Self.json(APNsPayloadBuilder.payload(
            for: Self.content(visual: nil, push: PushOptions(body: "alert")), marker: Self.marker, badge: nil))
        #expect((alert["aps"] as? [String: Any])?["alert"] as? [String: String] == ["body": "alert"])
        #expect(alert["rawContent"] as? String == "{}")
        let silent = try Self.json(APNsPayloadBuilder.payload(
            for: Self.content(visual: nil, push: PushOptions(body: "alert", delivery: .silent)), marker: Self.marker, badge: nil))
        #expect((silent["aps"] as? [String: Any])?["alert"] == nil)
    }

    @Test("a VoIP push reports the call with the push's own text; the size check counts the text")
    func voipAndSizeCountTheText() throws {
        let content = Self.content(visual: VisualContent(title: "Call"), push: PushOptions(title: "Ana calls you"))
        let voip = try Self.json(APNsPayloadBuilder.voipPayload(for: content, marker: Self.marker))
        #expect(voip["alert"] as? [String: String] == ["title": "Ana calls you"])
        let long = Self.content(visual: VisualContent(title: "Call"), push: PushOptions(body: String(repeating: "x", count: 4000)))
        #expect(APNsPayloadBuilder.worstCaseSize(of: long) > 4000)
    }
}
