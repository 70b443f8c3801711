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

    /// An alert (visual content, not delivered silently) or a background shoulder tap (`aps` as `APSDictionary` writes it),
    /// the `notify` marker (with the alert's deep link as `url`), then `imageUrl`, `rawContent` and the app's data under
    /// `data`, a namespace of its own where every name is free.
    public static func payload(for content: NotificationContent?, marker: PushMarker, badge: Int?) -> [UInt8] {
        var writer = JSONWriter(capacity: 384)
        writer.beginObject()
        writer.key("aps")
        APSDictionary.write(&writer, for: marker.kind.isContentChange ? content : nil, badge: badge)
        let isAlert = marker.kind.isContentChange && content?.isAlert == true
        ProviderPayloads.writeMarker(&writer, marker, url: isAlert ? content?.push?.url : nil)
        if let content, marker.kind.isContentChange {
            if content.isAlert, let imageUrl = content.push?.imageUrl { writer.key("imageUrl"); writer.string(imageUrl) }
            ProviderPayloads.writeAppContent(&writer, content)
        }
        writer.endObject()
        return writer.bytes
    }

    /// A VoIP push (PushKit): an empty `aps` (APNs requires the key; iOS shows nothing for a VoIP push), and what
    /// the app reports the call from: `notify`, the alert's text (the push's own title and body over the visual
    /// content's) under `alert`, `rawContent` and the app's data under `data`.
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

    /// The size of the largest payload this content can produce (largest badge and sequence).
    public static func worstCaseSize(of content: NotificationContent) -> Int {
        payload(for: content, marker: .worstCase, badge: 99_999).count
    }
}
