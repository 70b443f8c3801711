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
}

/// Payloads for the providers other than APNs. Each carries the same `notify` marker
/// (`id`, `seq`, `kind`) so the client recognises the push and knows what to sync.
public enum ProviderPayloads {
    /// The app-visible JSON of a push without APNs's `aps` wrapper: the Web Push plaintext, the WNS raw body,
    /// and the FCM `data` values. `{"notify": {...}, "title", "body", "badge", "rawContent", ...app data}`.
    public static func data(for content: NotificationContent?, marker: PushMarker, badge: Int?) -> [UInt8] {
        var writer = JSONWriter(capacity: 384)
        writer.beginObject()
        writeMarker(&writer, marker)
        if let content, marker.kind.isContentChange {
            if let title = content.payload.visualContent?.title { writer.key("title"); writer.string(title) }
            if let body = content.payload.visualContent?.body { writer.key("body"); writer.string(body) }
            writeAppContent(&writer, content)
        }
        if let badge { writer.key("badge"); writer.integer(Int64(badge)) }
        writer.endObject()
        return writer.bytes
    }

    /// An FCM HTTP v1 `message` (without the device token, which dispatch adds): data-only for shoulder taps,
    /// with a `notification` part for alerts. FCM data values must be strings, so the marker fields are strings.
    public static func fcmMessage(
        for content: NotificationContent?, marker: PushMarker, badge: Int?, collapseKey: String, highPriority: Bool, ttlSeconds: Int
    ) -> [UInt8] {
        var writer = JSONWriter(capacity: 512)
        writer.beginObject()
        writer.key("data")
        writer.beginObject()
        writer.key("notifyId"); writer.uuid(marker.notificationId)
        writer.key("notifySeq"); writer.string(String(marker.sequence))
        writer.key("notifyKind"); writer.string(marker.kind.rawValue)
        if let badge { writer.key("badge"); writer.string(String(badge)) }
        let content = marker.kind.isContentChange ? content : nil
        if let raw = content?.payload.rawContent { writer.key("rawContent"); writer.string(raw) }
        // App data: FCM data values are strings, so a value that is not one goes as its JSON text.
        for (name, value) in (content?.push?.data ?? [:]).sorted(by: { $0.key < $1.key }) {
            writer.key(name)
            switch value {
            case .string(let text): writer.string(text)
            case .bool(let flag): writer.string(flag ? "true" : "false")
            case .number(let number) where number.rounded() == number && abs(number) < 1e15: writer.string(String(Int64(number)))
            default:
                var json = JSONWriter(capacity: 64)
                json.value(value)
                writer.string(String(decoding: json.bytes, as: UTF8.self))
            }
        }
        writer.endObject()
        let visual = content?.payload.visualContent
        if let visual {
            writer.key("notification")
            writer.beginObject()
            if let title = visual.title { writer.key("title"); writer.string(title) }
            if let body = visual.body { writer.key("body"); writer.string(body) }
            writer.endObject()
        }
        writer.key("android")
        writer.beginObject()
        writer.key("collapse_key"); writer.string(collapseKey)
        writer.key("priority"); writer.string(highPriority ? "HIGH" : "NORMAL")
        writer.key("ttl"); writer.string("\(max(ttlSeconds, 0))s")
        // The alert's sound, the activity a tap opens (category), and the group it replaces within (groupName).
        if visual != nil, let content, content.push?.sound != nil || content.push?.category != nil || content.groupName != nil {
            writer.key("notification")
            writer.beginObject()
            if let sound = content.push?.sound { writer.key("sound"); writer.string(sound) }
            if let category = content.push?.category { writer.key("click_action"); writer.string(category) }
            if let group = content.groupName { writer.key("tag"); writer.string(group) }
            writer.endObject()
        }
        writer.endObject()
        writer.endObject()
        return writer.bytes
    }

    /// A WNS toast (`X-WNS-Type: wns/toast`) showing the title and body; the marker rides in `launch`.
    public static func wnsToast(for content: NotificationContent, marker: PushMarker) -> [UInt8] {
        let visual = content.payload.visualContent
        let launch = "notifyId=\(marker.notificationId.lowercasedString)&notifySeq=\(marker.sequence)"
        let xml = "<toast launch=\"\(escapeXML(launch))\"><visual><binding template=\"ToastGeneric\">"
            + "<text>\(escapeXML(visual?.title ?? ""))</text><text>\(escapeXML(visual?.body ?? ""))</text>"
            + "</binding></visual></toast>"
        return Array(xml.utf8)
    }

    /// The largest Web Push message body push services take (RFC 8030 §7.2).
    public static let webPushMaximumBody = 4096
    /// What aes128gcm encryption adds to the plaintext (RFC 8188, RFC 8291): the header (16-byte salt, 4-byte record
    /// size, 1-byte key id length, 65-byte P-256 key), the padding delimiter and the 16-byte tag.
    public static let webPushEncryptionOverhead = 16 + 4 + 1 + 65 + 1 + 16

    /// The Web Push body `content` can become at most, encrypted: its largest marker (sequence) and badge counted.
    public static func webPushWorstCaseBody(of content: NotificationContent) -> Int {
        // Any id will do: every id is written with 36 characters.
        let marker = PushMarker(notificationId: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)), sequence: Int64.max, kind: .created)
        return data(for: content, marker: marker, badge: Int.max).count + webPushEncryptionOverhead
    }

    /// Top-level keys app data may not use: they are the payloads' own (APNs' `aps`, the marker in both its forms, the
    /// Web Push JSON's `title`, `body` and `badge`, which app data would otherwise write a second time and override) or
    /// FCM's reserved data keys.
    public static let reservedKeys: Set<String> = [
        "aps", "notify", "rawContent", "alert", "title", "body", "badge", "notifyId", "notifySeq", "notifyKind", "from", "notification", "message_type",
    ]

    /// `rawContent` and the app's data keys, in a stable order (every payload that carries the content ends so).
    public static func writeAppContent(_ writer: inout JSONWriter, _ content: NotificationContent) {
        if let raw = content.payload.rawContent { writer.key("rawContent"); writer.string(raw) }
        if let data = content.push?.data {
            for (name, value) in data.sorted(by: { $0.key < $1.key }) {
                writer.key(name)
                writer.value(value)
            }
        }
    }

    /// Writes `"notify": {"id", "seq", "kind"}`, the marker every push carries.
    public static func writeMarker(_ writer: inout JSONWriter, _ marker: PushMarker) {
        writer.key("notify")
        writer.beginObject()
        writer.key("id"); writer.uuid(marker.notificationId)
        writer.key("seq"); writer.integer(marker.sequence)
        writer.key("kind"); writer.string(marker.kind.rawValue)
        writer.endObject()
    }

    private static func escapeXML(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
