import Foundation
import NotifyModels
import Testing

/// Where each provider's payload puts the app's data (a namespace of its own, whatever its names), the deep link
/// (`push.url`) and the per-platform blocks of an FCM message.
@Suite struct ProviderPayloadTests {
    private static let marker = PushMarker(notificationId: UUID(), sequence: 9, kind: .created)
    private static let appData: [String: JSONValue] = [
        "category": .string("x"), "title": .string("y"), "sound": .string("z"), "count": .number(2), "from": .string("f"), "notifyId": .bool(true),
    ]

    private static func content(visual: Bool = true, url: String? = "https://example.com/orders/42?tab=a&b=1") -> NotificationContent {
        NotificationContent(
            appNotificationId: nil, groupName: nil, priority: .high, expirationDateTime: Date().addingTimeInterval(600), displayTimeToLive: nil,
            platformTypes: nil, payload: NotificationPayload(rawContent: "r", visualContent: visual ? VisualContent(title: "T", body: "B") : nil),
            push: PushOptions(sound: "s.caf", category: "c", url: url, androidChannelId: "orders", data: appData))
    }

    private static func json(_ bytes: [UInt8]) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    private static func fcm(_ content: NotificationContent, highPriority: Bool = true) throws -> [String: Any] {
        try json(ProviderPayloads.fcmMessage(for: content, marker: marker, badge: 4, collapseKey: "k", highPriority: highPriority, ttlSeconds: 600))
    }

    @Test("Web Push and WNS raw JSON: the app's data under data, beside notify's own title, category and sound; the deep link as url")
    func webPushJSON() throws {
        let alert = try Self.json(ProviderPayloads.data(for: Self.content(), marker: Self.marker, badge: 4))
        #expect(alert["title"] as? String == "T" && alert["category"] as? String == "c" && alert["sound"] as? String == "s.caf")
        #expect(alert["url"] as? String == "https://example.com/orders/42?tab=a&b=1")
        #expect(alert["data"] as? NSDictionary == ["category": "x", "title": "y", "sound": "z", "count": 2, "from": "f", "notifyId": true] as NSDictionary)
        #expect(alert["rawContent"] as? String == "r" && alert["badge"] as? Int == 4)
        let raw = try Self.json(ProviderPayloads.data(for: Self.content(visual: false), marker: Self.marker, badge: nil))
        #expect(raw["title"] == nil && raw["url"] == nil, "a shoulder tap shows nothing and opens nothing")
        #expect((raw["data"] as? [String: Any])?["title"] as? String == "y")
    }

    @Test("FCM: the app's data as the JSON text of its object under data.data, whatever its names (FCM's own too); the deep link as notifyUrl and webpush.fcm_options.link; the channel")
    func fcmData() throws {
        let message = try Self.fcm(Self.content())
        let data = try #require(message["data"] as? [String: String])
        let appData = try Self.json(Array(try #require(data["data"]).utf8))
        #expect(appData as NSDictionary == ["category": "x", "title": "y", "sound": "z", "count": 2, "from": "f", "notifyId": true] as NSDictionary)
        #expect(data["category"] == nil && data["from"] == nil, "the app's keys are not flattened beside notify's")
        #expect(data["notifyId"] == Self.marker.notificationId.lowercasedString && data["notifyUrl"] == "https://example.com/orders/42?tab=a&b=1")
        let android = try #require((message["android"] as? [String: Any])?["notification"] as? [String: Any])
        #expect(android["channel_id"] as? String == "orders" && android["click_action"] as? String == "c")
        let webpush = try #require(message["webpush"] as? [String: Any])
        #expect(webpush["headers"] as? [String: String] == ["Urgency": "high", "TTL": "600"])
        #expect(webpush["fcm_options"] as? [String: String] == ["link": "https://example.com/orders/42?tab=a&b=1"])
        let appScheme = try Self.fcm(Self.content(url: "myapp://orders/42"))
        #expect((appScheme["webpush"] as? [String: Any])?["fcm_options"] == nil, "FCM links a browser to https only")
        #expect((appScheme["data"] as? [String: String])?["notifyUrl"] == "myapp://orders/42")
    }

    @Test("FCM's apns block: an alert's headers (alert, 10) and aps (alert, sound, badge, content-available, category, deep link); a shoulder tap's (background, 5)")
    func fcmApns() throws {
        let apns = try #require(try Self.fcm(Self.content())["apns"] as? [String: Any])
        #expect(apns["headers"] as? [String: String] == ["apns-push-type": "alert", "apns-priority": "10"])
        let aps = try #require((apns["payload"] as? [String: Any])?["aps"] as? [String: Any])
        #expect(aps["alert"] as? [String: String] == ["title": "T", "body": "B"])
        #expect(aps["sound"] as? String == "s.caf" && aps["badge"] as? Int == 4 && aps["content-available"] as? Int == 1)
        #expect(aps["category"] as? String == "c" && aps["target-content-id"] as? String == "https://example.com/orders/42?tab=a&b=1")
        let lowAlert = try #require(try Self.fcm(Self.content(), highPriority: false)["apns"] as? [String: Any])
        #expect((lowAlert["headers"] as? [String: String])?["apns-priority"] == "5")
        let tap = try #require(try Self.fcm(Self.content(visual: false), highPriority: false)["apns"] as? [String: Any])
        #expect(tap["headers"] as? [String: String] == ["apns-push-type": "background", "apns-priority": "5"])
        let tapAps = try #require((tap["payload"] as? [String: Any])?["aps"] as? [String: Any])
        #expect(tapAps["alert"] == nil && tapAps["sound"] == nil && tapAps["content-available"] as? Int == 1 && tapAps["badge"] as? Int == 4)
        let tapMessage = try Self.fcm(Self.content(visual: false), highPriority: false)
        #expect((tapMessage["webpush"] as? [String: Any])?["headers"] as? [String: String] == ["Urgency": "low", "TTL": "600"])
        #expect((tapMessage["data"] as? [String: String])?["notifyUrl"] == nil)
    }

    @Test("a WNS toast's launch arguments carry the marker and the deep link, percent-encoded")
    func wnsLaunch() throws {
        let toast = String(decoding: ProviderPayloads.wnsToast(for: Self.content(), marker: Self.marker), as: UTF8.self)
        let launch = try #require(toast.split(separator: "\"").dropFirst().first.map(String.init))
        var arguments: [String: String] = [:]
        for pair in launch.replacingOccurrences(of: "&amp;", with: "&").split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            arguments[parts[0]] = parts[1].removingPercentEncoding
        }
        #expect(arguments == [
            "notifyId": Self.marker.notificationId.lowercasedString, "notifySeq": "9", "url": "https://example.com/orders/42?tab=a&b=1",
        ])
        #expect(!toast.contains("\"y\""), "the app's data is not in a toast")
    }
}
