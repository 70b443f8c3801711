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

    /// An alert (visual content) or a background shoulder tap. Both carry `content-available: 1`: an alert also wakes
    /// the app, so it syncs on receipt as for a shoulder tap.
    public static func payload(for content: NotificationContent?, marker: PushMarker, badge: Int?) -> [UInt8] {
        var writer = JSONWriter(capacity: 384)
        writer.beginObject()
        writer.key("aps")
        writer.beginObject()
        if let content, marker.kind.isContentChange, let visual = content.payload.visualContent {
            writer.key("alert")
            writer.beginObject()
            if let title = visual.title { writer.key("title"); writer.string(title) }
            if let body = visual.body { writer.key("body"); writer.string(body) }
            writer.endObject()
            if let sound = content.push?.sound { writer.key("sound"); writer.string(sound) }
            if let category = content.push?.category { writer.key("category"); writer.string(category) }
            if let threadId = content.push?.threadId ?? content.groupName { writer.key("thread-id"); writer.string(threadId) }
        }
        writer.key("content-available")
        writer.integer(1)
        if let badge { writer.key("badge"); writer.integer(Int64(badge)) }
        writer.endObject()
        ProviderPayloads.writeMarker(&writer, marker)
        if let content, marker.kind.isContentChange { ProviderPayloads.writeAppContent(&writer, content) }
        writer.endObject()
        return writer.bytes
    }

    /// A VoIP push (PushKit): an empty `aps` (APNs requires the key; iOS shows nothing for a VoIP push), and what
    /// the app reports the call from: `notify`, the visual content under `alert`, `rawContent` and the app's data.
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
            if let visual = content.payload.visualContent {
                writer.key("alert")
                writer.beginObject()
                if let title = visual.title { writer.key("title"); writer.string(title) }
                if let body = visual.body { writer.key("body"); writer.string(body) }
                writer.endObject()
            }
            ProviderPayloads.writeAppContent(&writer, content)
        }
        writer.endObject()
        return writer.bytes
    }

    /// The size of the largest payload this content can produce (largest badge and sequence).
    public static func worstCaseSize(of content: NotificationContent) -> Int {
        // Any id will do: every id is written with 36 characters.
        let marker = PushMarker(notificationId: UUID(uuid: nilUUIDBytes), sequence: Int64.max, kind: .created)
        return payload(for: content, marker: marker, badge: 99_999).count
    }
}

/// The nil UUID's bytes, for a marker whose id only counts by its length.
private let nilUUIDBytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
