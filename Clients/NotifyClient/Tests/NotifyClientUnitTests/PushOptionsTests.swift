import Foundation
import NotifyAPI
import Testing

/// A recipient's own alert text and the recipients-only push, as an app server sends them.
@Suite struct PushOptionsTests {
    @Test("title and body are read and written under their names, beside subtitle, and pushRecipientsOnly beside recipients")
    func alertTextCoding() throws {
        let json = #"""
            {"eventSource":"room-7","pushRecipientsOnly":true,"payload":{"rawContent":"{}"},
             "recipients":[{"userId":"user1","push":{"title":"hey user1","subtitle":"from Ana","body":"alert"}},{"userId":"user3"}]}
            """#
        let request = try WireCoding.makeDecoder().decode(NotificationRequest.self, from: Data(json.utf8))
        #expect(request.pushRecipientsOnly == true)
        let push = try #require(request.recipients?.first?.push)
        #expect(push == PushOptions(title: "hey user1", subtitle: "from Ana", body: "alert"))
        #expect(request.recipients?.last?.push == nil)

        let written = try JSONSerialization.jsonObject(with: WireCoding.makeEncoder().encode(request)) as? [String: Any]
        let recipients = written?["recipients"] as? [[String: Any]]
        let writtenPush = recipients?.first?["push"] as? [String: String]
        #expect(writtenPush == ["title": "hey user1", "subtitle": "from Ana", "body": "alert"])
        #expect(written?["pushRecipientsOnly"] as? Bool == true)
        #expect(try WireCoding.makeDecoder().decode(NotificationRequest.self, from: WireCoding.makeEncoder().encode(request)) == request)
    }

    @Test("a recipient's title and body replace the notification's, each on its own; what it leaves out stays")
    func alertTextOverrides() {
        let notification = PushOptions(sound: "chime.caf", title: "New message", body: "Open the app to read it")
        #expect(notification.hasAlertText && !PushOptions(subtitle: "s").hasAlertText)
        let user1 = notification.overridden(by: PushOptions(title: "hey user1"))
        #expect(user1.title == "hey user1" && user1.body == "Open the app to read it" && user1.sound == "chime.caf")
        let user2 = notification.overridden(by: PushOptions(body: "alert"))
        #expect(user2.title == "New message" && user2.body == "alert")
        #expect(PushOptions().overridden(by: PushOptions(title: "t", body: "b")) == PushOptions(title: "t", body: "b"))
    }

    @Test("the alert shows the push's own text over the visual content's; with no visual content, the push's text makes an alert")
    func alertTextOfContent() {
        func content(visual: VisualContent?, push: PushOptions?) -> NotificationContent {
            NotificationContent(
                appNotificationId: nil, groupName: nil, priority: .high, expirationDateTime: Date(), displayTimeToLive: nil, platformTypes: nil,
                payload: NotificationPayload(rawContent: "{}", visualContent: visual), push: push)
        }
        let visual = VisualContent(title: "New message", body: "in room 7")
        #expect(content(visual: visual, push: nil).alertText == visual)
        #expect(content(visual: visual, push: PushOptions(body: "alert")).alertText == VisualContent(title: "New message", body: "alert"))
        let raw = content(visual: nil, push: PushOptions(title: "hey user1"))
        #expect(raw.isAlert && raw.alertText == VisualContent(title: "hey user1", body: nil))
        #expect(!content(visual: nil, push: PushOptions(subtitle: "s")).isAlert)
        #expect(!content(visual: nil, push: PushOptions(title: "t", delivery: .silent)).isAlert)
    }
}
