import Foundation
import NotifyAPNsCore
import NotifyModels
import Testing

@Suite("PushKit (apns-voip) subscriptions")
struct VoIPTests {
    @Test("a PushKit token is an APNs token: hexadecimal, lowercased, delivered by the APNs provider")
    func registration() throws {
        let token = String(repeating: "AB", count: 32)
        let valid = try SubscriptionRequest(platform: .apnsVoip, pushToken: token).validated()
        #expect(valid.platform == .apnsVoip && valid.pushToken == token.lowercased())
        #expect(Platform.apnsVoip.provider == .apns)
        #expect(!Platform.providers.contains(.apnsVoip))
        #expect(throws: ValidationError.self) { try SubscriptionRequest(platform: .apnsVoip, pushToken: "not-hex").validated() }
    }

    @Test("the VoIP payload carries the call: empty aps, notify marker, alert, rawContent and data; never larger than the size ingest checks")
    func payload() throws {
        let content = NotificationContent(
            appNotificationId: nil, groupName: nil, priority: .high, expirationDateTime: Date().addingTimeInterval(60),
            displayTimeToLive: nil, platformTypes: [.apnsVoip],
            payload: NotificationPayload(rawContent: "call-42", visualContent: VisualContent(title: "Incoming call", body: "Ada")),
            push: PushOptions(data: ["callId": .string("42")]))
        let marker = PushMarker(notificationId: UUID(), sequence: 3, kind: .created)
        let voip = APNsPayloadBuilder.voipPayload(for: content, marker: marker)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(voip)) as? [String: Any])
        #expect((object["aps"] as? [String: Any])?.isEmpty == true)
        #expect((object["alert"] as? [String: Any])?["title"] as? String == "Incoming call")
        #expect(object["rawContent"] as? String == "call-42")
        #expect((object["data"] as? [String: Any])?["callId"] as? String == "42")
        #expect((object["notify"] as? [String: Any])?["seq"] != nil)
        #expect(voip.count <= APNsPayloadBuilder.worstCaseSize(of: content))
    }
}
