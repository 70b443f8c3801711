import Foundation
import NotifyJSON

/// What every push tells the device: the notification, the change's sequence and its kind (`notify` in the payload).
public struct PushMarker: Sendable, Equatable {
    public var notificationId: UUID
    public var sequence: Int64
    public var kind: ChangeKind
    public init(notificationId: UUID, sequence: Int64, kind: ChangeKind) {
        self.notificationId = notificationId
        self.sequence = sequence
        self.kind = kind
    }

    /// The marker that writes the most bytes (any id writes 36 characters), for the largest payload a content can become.
    public static let worstCase = PushMarker(
        notificationId: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)), sequence: Int64.max, kind: .created)
}

/// Payloads for the providers other than APNs. Each carries the same `notify` marker
/// (`id`, `seq`, `kind`) so the client recognises the push and knows what to sync.
public enum ProviderPayloads {
    /// The app-visible JSON of a push without APNs's `aps` wrapper: the Web Push plaintext and the WNS raw body.
    /// `{"notify": {...}, "title", "body", ..., "url", "rawContent", "data": {app data}, "badge"}`: the app's data in a
    /// namespace of its own, so no name of it clashes with notify's.
    public static func data(for content: NotificationContent?, marker: PushMarker, badge: Int?) -> [UInt8] {
        var writer = JSONWriter(capacity: 384)
        writer.beginObject()
        writeMarker(&writer, marker)
        if let content, marker.kind.isContentChange {
            if content.isAlert, let text = content.alertText {
                // What a service worker shows (`showNotification(title, {body, image, tag, ...})`) and may use.
                if let title = text.title { writer.key("title"); writer.string(title) }
                if let subtitle = content.push?.subtitle { writer.key("subtitle"); writer.string(subtitle) }
                if let body = text.body { writer.key("body"); writer.string(body) }
                if let image = content.push?.imageUrl { writer.key("image"); writer.string(image) }
                if let tag = content.push?.threadId ?? content.groupName { writer.key("tag"); writer.string(tag) }
                if let sound = content.push?.sound { writer.key("sound"); writer.string(sound) }
                if let category = content.push?.category { writer.key("category"); writer.string(category) }
                if let level = content.push?.interruptionLevel { writer.key("interruptionLevel"); writer.string(level.rawValue) }
                // The page a click opens (the service worker's `clients.openWindow(url)`).
                if let url = content.push?.url { writer.key("url"); writer.string(url) }
            }
            if let raw = content.payload.rawContent { writer.key("rawContent"); writer.string(raw) }
            if let data = content.push?.data { writer.key("data"); writer.value(.object(data)) }
        }
        if let badge { writer.key("badge"); writer.integer(Int64(badge)) }
        writer.endObject()
        return writer.bytes
    }

    /// An FCM HTTP v1 `message` (without the device token, which dispatch adds): data-only for shoulder taps,
    /// with a `notification` part for alerts. FCM data values must be strings, so the marker fields are strings.
    /// Each platform's block says what FCM passes on: `android` (collapse key, priority, TTL, the alert's
    /// notification), `apns` (the headers and `aps` an Apple device needs: sound, badge, content-available, alert) and
    /// `webpush` (Urgency, TTL and the alert's https `url` as `fcm_options.link`).
    public static func fcmMessage(
        for content: NotificationContent?, marker: PushMarker, badge: Int?, collapseKey: String, highPriority: Bool, ttlSeconds: Int
    ) -> [UInt8] {
        var writer = JSONWriter(capacity: 512)
        writer.beginObject()
        let content = marker.kind.isContentChange ? content : nil
        writer.key("data")
        writeFCMData(&writer, content, marker: marker, badge: badge)
        let isAlert = content?.isAlert == true
        if isAlert, let content {
            writer.key("notification")
            writeFCMNotification(&writer, content)
        }
        writer.key("android")
        writer.beginObject()
        writer.key("collapse_key"); writer.string(collapseKey)
        writer.key("priority"); writer.string(highPriority ? "HIGH" : "NORMAL")
        writer.key("ttl"); writer.string("\(max(ttlSeconds, 0))s")
        // The alert's sound, the activity a tap opens (category), the group it replaces within (groupName), its
        // localized texts and how it may interrupt.
        if isAlert, let alert = content, hasAndroidNotification(alert) {
            writer.key("notification")
            writer.beginObject()
            if let sound = alert.push?.sound { writer.key("sound"); writer.string(sound) }
            if let category = alert.push?.category { writer.key("click_action"); writer.string(category) }
            if let group = alert.groupName { writer.key("tag"); writer.string(group) }
            if let key = alert.push?.titleLocKey { writer.key("title_loc_key"); writer.string(key) }
            if let args = alert.push?.titleLocArgs { writer.key("title_loc_args"); writer.strings(args) }
            if let key = alert.push?.bodyLocKey { writer.key("body_loc_key"); writer.string(key) }
            if let args = alert.push?.bodyLocArgs { writer.key("body_loc_args"); writer.strings(args) }
            if let level = alert.push?.interruptionLevel { writer.key("notification_priority"); writer.string(androidPriority(of: level)) }
            if let channel = alert.push?.androidChannelId { writer.key("channel_id"); writer.string(channel) }
            writer.endObject()
        }
        writer.endObject()
        writeFCMApns(&writer, content, badge: badge, highPriority: highPriority)
        writeFCMWebPush(&writer, content, highPriority: highPriority, ttlSeconds: ttlSeconds)
        writer.endObject()
        return writer.bytes
    }

    /// FCM's `apns` block: `apns-push-type` and `apns-priority` as APNs itself gets them (an alert at high priority
    /// 10, else 5), and the payload's `aps` (`APSDictionary`: the alert, sound, badge, content-available). FCM adds
    /// the message's `data` beside `aps`.
    private static func writeFCMApns(_ writer: inout JSONWriter, _ content: NotificationContent?, badge: Int?, highPriority: Bool) {
        let isAlert = content?.isAlert == true
        writer.key("apns")
        writer.beginObject()
        writer.key("headers")
        writer.beginObject()
        writer.key("apns-push-type"); writer.string(isAlert ? "alert" : "background")
        writer.key("apns-priority"); writer.string(isAlert && highPriority ? "10" : "5")
        writer.endObject()
        writer.key("payload")
        writer.beginObject()
        writer.key("aps")
        APSDictionary.write(&writer, for: content, badge: badge)
        writer.endObject()
        writer.endObject()
    }

    /// FCM's `webpush` block: RFC 8030's `Urgency` and `TTL` headers, and for an alert with an https `url`, the page a
    /// click opens (`fcm_options.link`; FCM takes https links only).
    private static func writeFCMWebPush(_ writer: inout JSONWriter, _ content: NotificationContent?, highPriority: Bool, ttlSeconds: Int) {
        writer.key("webpush")
        writer.beginObject()
        writer.key("headers")
        writer.beginObject()
        writer.key("Urgency"); writer.string(highPriority ? "high" : "low")
        writer.key("TTL"); writer.string(String(max(ttlSeconds, 0)))
        writer.endObject()
        if content?.isAlert == true, let url = content?.push?.url, url.lowercased().hasPrefix("https:") {
            writer.key("fcm_options")
            writer.beginObject()
            writer.key("link"); writer.string(url)
            writer.endObject()
        }
        writer.endObject()
    }

    /// FCM's `data`: the marker's flat keys, the badge, `rawContent`, an alert's deep link (`notifyUrl`, which an Android
    /// app opens on a tap) and the app's data as the JSON text of its object under `data` (FCM's values are strings), so
    /// every name of the app's is free, FCM's reserved ones included.
    private static func writeFCMData(_ writer: inout JSONWriter, _ content: NotificationContent?, marker: PushMarker, badge: Int?) {
        writer.beginObject()
        writer.key("notifyId"); writer.uuid(marker.notificationId)
        writer.key("notifySeq"); writer.string(String(marker.sequence))
        writer.key("notifyKind"); writer.string(marker.kind.rawValue)
        if let badge { writer.key("badge"); writer.string(String(badge)) }
        if let raw = content?.payload.rawContent { writer.key("rawContent"); writer.string(raw) }
        if content?.isAlert == true, let url = content?.push?.url { writer.key("notifyUrl"); writer.string(url) }
        if let data = content?.push?.data {
            var json = JSONWriter(capacity: 128)
            json.value(.object(data))
            writer.key("data"); writer.string(String(decoding: json.bytes, as: UTF8.self))
        }
        writer.endObject()
    }

    /// FCM's `notification`: what every platform shows (the alert's text: the push's own title and body over the
    /// visual content's).
    private static func writeFCMNotification(_ writer: inout JSONWriter, _ content: NotificationContent) {
        writer.beginObject()
        let text = content.alertText
        if let title = text?.title { writer.key("title"); writer.string(title) }
        if let body = text?.body { writer.key("body"); writer.string(body) }
        if let image = content.push?.imageUrl { writer.key("image"); writer.string(image) }
        writer.endObject()
    }

    /// FCM's limit on an Android message: its `data` and `notification` together, in bytes.
    public static let fcmMaximumPayload = 4096

    /// The size FCM counts of the message `content` can become at most (its largest marker and badge): `data` and
    /// `notification` together.
    public static func fcmWorstCasePayload(of content: NotificationContent) -> Int {
        let marker = PushMarker.worstCase
        var data = JSONWriter(capacity: 512)
        writeFCMData(&data, content, marker: marker, badge: Int.max)
        guard content.isAlert else { return data.bytes.count }
        var notification = JSONWriter(capacity: 256)
        writeFCMNotification(&notification, content)
        return data.bytes.count + notification.bytes.count
    }

    /// WNS's limit on a notification's body, in bytes.
    public static let wnsMaximumPayload = 5000

    /// The size of the WNS body `content` can become at most: its toast when it is an alert, else its raw JSON.
    public static func wnsWorstCasePayload(of content: NotificationContent) -> Int {
        let marker = PushMarker.worstCase
        return content.isAlert ? wnsToast(for: content, marker: marker).count : data(for: content, marker: marker, badge: Int.max).count
    }

    /// Whether an alert's `android.notification` holds anything.
    private static func hasAndroidNotification(_ content: NotificationContent) -> Bool {
        guard let push = content.push else { return content.groupName != nil }
        return push.sound != nil || push.category != nil || content.groupName != nil || push.interruptionLevel != nil
            || push.titleLocKey != nil || push.titleLocArgs != nil || push.bodyLocKey != nil || push.bodyLocArgs != nil
            || push.androidChannelId != nil
    }

    /// Android's nearest notification priority to an interruption level.
    private static func androidPriority(of level: InterruptionLevel) -> String {
        switch level {
        case .passive: "PRIORITY_LOW"
        case .active: "PRIORITY_DEFAULT"
        case .timeSensitive: "PRIORITY_HIGH"
        case .critical: "PRIORITY_MAX"
        }
    }

    /// A WNS toast (`X-WNS-Type: wns/toast`) showing the alert's title, subtitle and body (the push's own title and
    /// body over the visual content's), with the image as its hero and the
    /// sound when it names one of Windows' (`ms-winsoundevent:`) or the app's (`ms-appx:`) sounds; a time-sensitive or
    /// critical one is an urgent toast. The marker rides in `launch`, the arguments the app is activated with, and the
    /// deep link with it as `url` (percent-encoded): `notifyId=…&notifySeq=…&url=…`.
    public static func wnsToast(for content: NotificationContent, marker: PushMarker) -> [UInt8] {
        let text = content.alertText
        let push = content.push
        var launch = "notifyId=\(marker.notificationId.lowercasedString)&notifySeq=\(marker.sequence)"
        if let url = push?.url { launch += "&url=" + percentEncoded(url) }
        let urgent = push?.interruptionLevel == .timeSensitive || push?.interruptionLevel == .critical
        var xml = "<toast launch=\"\(escapeXML(launch))\"\(urgent ? " scenario=\"urgent\"" : "")><visual><binding template=\"ToastGeneric\">"
        xml += "<text>\(escapeXML(text?.title ?? ""))</text>"
        if let subtitle = push?.subtitle { xml += "<text>\(escapeXML(subtitle))</text>" }
        xml += "<text>\(escapeXML(text?.body ?? ""))</text>"
        if let image = push?.imageUrl { xml += "<image placement=\"hero\" src=\"\(escapeXML(image))\"/>" }
        xml += "</binding></visual>"
        if let sound = push?.sound, sound.hasPrefix("ms-winsoundevent:") || sound.hasPrefix("ms-appx:") {
            xml += "<audio src=\"\(escapeXML(sound))\"/>"
        }
        xml += "</toast>"
        return Array(xml.utf8)
    }

    /// The largest Web Push message body push services take (RFC 8030 §7.2).
    public static let webPushMaximumBody = 4096
    /// What aes128gcm encryption adds to the plaintext (RFC 8188, RFC 8291): the header (16-byte salt, 4-byte record
    /// size, 1-byte key id length, 65-byte P-256 key), the padding delimiter and the 16-byte tag.
    public static let webPushEncryptionOverhead = 16 + 4 + 1 + 65 + 1 + 16

    /// The Web Push body `content` can become at most, encrypted: its largest marker (sequence) and badge counted.
    public static func webPushWorstCaseBody(of content: NotificationContent) -> Int {
        let marker = PushMarker.worstCase
        return data(for: content, marker: marker, badge: Int.max).count + webPushEncryptionOverhead
    }

    /// `rawContent`, then the app's data as an object under `data`, its namespace: how an APNs payload ends. Every name
    /// of the app's is free there, `aps` and `notify` included.
    public static func writeAppContent(_ writer: inout JSONWriter, _ content: NotificationContent) {
        if let raw = content.payload.rawContent { writer.key("rawContent"); writer.string(raw) }
        if let data = content.push?.data { writer.key("data"); writer.value(.object(data)) }
    }

    /// Writes `"notify": {"id", "seq", "kind"}`, the marker every push carries, and an alert's deep link as `url` where
    /// the payload has no other place of notify's for it (APNs).
    public static func writeMarker(_ writer: inout JSONWriter, _ marker: PushMarker, url: String? = nil) {
        writer.key("notify")
        writer.beginObject()
        writer.key("id"); writer.uuid(marker.notificationId)
        writer.key("seq"); writer.integer(marker.sequence)
        writer.key("kind"); writer.string(marker.kind.rawValue)
        if let url { writer.key("url"); writer.string(url) }
        writer.endObject()
    }

    /// `text` with every byte but RFC 3986's unreserved characters percent-encoded, as a value of `launch`'s arguments.
    private static func percentEncoded(_ text: String) -> String {
        var encoded = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                encoded += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0x0F, radix: 16, uppercase: true)
            }
        }
        return encoded
    }

    private static func escapeXML(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
