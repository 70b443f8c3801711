import Foundation
import NotifyJSON
import NotifyModels

/// Builds the JSON body of an APNs push for one change.
///
/// Every push names the notification and the change's sequence under the `notify` key,
/// which is how the client library recognises this service's pushes and knows what to sync.
public enum APNsPayloadBuilder {
    /// APNs rejects larger payloads (VoIP aside) with 413 PayloadTooLarge.
    public static let maximumPayloadBytes = 4096

    /// An alert (visual content, not delivered silently) or a background shoulder tap. Both carry `content-available: 1`: an alert also wakes
    /// the app, so it syncs on receipt as for a shoulder tap.
    public static func payload(for content: NotificationContent?, marker: PushMarker, badge: Int?) -> [UInt8] {
        var writer = JSONWriter(capacity: 384)
        writer.beginObject()
        writer.key("aps")
        writer.beginObject()
        if let content, marker.kind.isContentChange, content.isAlert, let text = content.alertText {
            writer.key("alert")
            writer.beginObject()
            if let title = text.title { writer.key("title"); writer.string(title) }
            if let subtitle = content.push?.subtitle { writer.key("subtitle"); writer.string(subtitle) }
            if let body = text.body { writer.key("body"); writer.string(body) }
            if let key = content.push?.titleLocKey { writer.key("title-loc-key"); writer.string(key) }
            if let args = content.push?.titleLocArgs { writer.key("title-loc-args"); writer.strings(args) }
            if let key = content.push?.bodyLocKey { writer.key("loc-key"); writer.string(key) }
            if let args = content.push?.bodyLocArgs { writer.key("loc-args"); writer.strings(args) }
            if let launchImage = content.push?.launchImage { writer.key("launch-image"); writer.string(launchImage) }
            writer.endObject()
            if let sound = content.push?.sound {
                writer.key("sound")
                if content.push?.criticalSound == true {
                    writer.beginObject()
                    writer.key("critical"); writer.integer(1)
                    writer.key("name"); writer.string(sound)
                    writer.key("volume"); writer.integer(1)
                    writer.endObject()
                } else {
                    writer.string(sound)
                }
            }
            if let category = content.push?.category { writer.key("category"); writer.string(category) }
            if let threadId = content.push?.threadId ?? content.groupName { writer.key("thread-id"); writer.string(threadId) }
            // An image is fetched by the app's notification service extension, which only runs with mutable-content.
            if content.push?.mutableContent == true || content.push?.imageUrl != nil { writer.key("mutable-content"); writer.integer(1) }
            if let level = content.push?.interruptionLevel { writer.key("interruption-level"); writer.string(Self.apnsName(of: level)) }
            if let score = content.push?.relevanceScore { writer.key("relevance-score"); writer.value(.number(score)) }
        }
        writer.key("content-available")
        writer.integer(1)
        if let badge { writer.key("badge"); writer.integer(Int64(badge)) }
        writer.endObject()
        ProviderPayloads.writeMarker(&writer, marker)
        if let content, marker.kind.isContentChange {
            if content.isAlert, let imageUrl = content.push?.imageUrl { writer.key("imageUrl"); writer.string(imageUrl) }
            ProviderPayloads.writeAppContent(&writer, content)
        }
        writer.endObject()
        return writer.bytes
    }

    /// A VoIP push (PushKit): an empty `aps` (APNs requires the key; iOS shows nothing for a VoIP push), and what
    /// the app reports the call from: `notify`, the alert's text (the push's own title and body over the visual
    /// content's) under `alert`, `rawContent` and the app's data.
    /// Never larger than the worst-case alert payload of the same content (and APNs allows VoIP 5120 bytes),
    /// so the ingest size check covers it.
    public static func voipPayload(for content: NotificationContent?, marker: PushMarker) -> [UInt8] {
        var writer = JSONWriter(capacity: 256)
        writer.beginObject()
        writer.key("aps")
        writer.beginObject()
        writer.endObject()
        ProviderPayloads.writeMarker(&writer, marker)
        if let content {
            if let text = content.alertText {
                writer.key("alert")
                writer.beginObject()
                if let title = text.title { writer.key("title"); writer.string(title) }
                if let body = text.body { writer.key("body"); writer.string(body) }
                writer.endObject()
            }
            ProviderPayloads.writeAppContent(&writer, content)
        }
        writer.endObject()
        return writer.bytes
    }

    /// APNs' name of an interruption level.
    static func apnsName(of level: InterruptionLevel) -> String {
        switch level {
        case .passive: "passive"
        case .active: "active"
        case .timeSensitive: "time-sensitive"
        case .critical: "critical"
        }
    }

    /// The size of the largest payload this content can produce (largest badge and sequence).
    public static func worstCaseSize(of content: NotificationContent) -> Int {
        payload(for: content, marker: .worstCase, badge: 99_999).count
    }
}
