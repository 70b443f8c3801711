import NotifyJSON

/// Writes APNs' `aps` dictionary of a push: the APNs payload's own, and the `apns.payload.aps` of an FCM message to an
/// Apple device.
public enum APSDictionary {
    /// `aps` for `content` (nil: a state change's push): an alert's text, sound, category, thread, deep link
    /// (`target-content-id`), interruption level and relevance when `content` is an alert to show; always
    /// `content-available: 1` (an alert also wakes the app, so it syncs on receipt as for a shoulder tap); the badge.
    public static func write(_ writer: inout JSONWriter, for content: NotificationContent?, badge: Int?) {
        writer.beginObject()
        if let content, content.isAlert, let text = content.alertText {
            let push = content.push
            writer.key("alert")
            writer.beginObject()
            if let title = text.title { writer.key("title"); writer.string(title) }
            if let subtitle = push?.subtitle { writer.key("subtitle"); writer.string(subtitle) }
            if let body = text.body { writer.key("body"); writer.string(body) }
            if let key = push?.titleLocKey { writer.key("title-loc-key"); writer.string(key) }
            if let args = push?.titleLocArgs { writer.key("title-loc-args"); writer.strings(args) }
            if let key = push?.bodyLocKey { writer.key("loc-key"); writer.string(key) }
            if let args = push?.bodyLocArgs { writer.key("loc-args"); writer.strings(args) }
            if let launchImage = push?.launchImage { writer.key("launch-image"); writer.string(launchImage) }
            writer.endObject()
            if let sound = push?.sound {
                writer.key("sound")
                if push?.criticalSound == true {
                    writer.beginObject()
                    writer.key("critical"); writer.integer(1)
                    writer.key("name"); writer.string(sound)
                    writer.key("volume"); writer.integer(1)
                    writer.endObject()
                } else {
                    writer.string(sound)
                }
            }
            if let category = push?.category { writer.key("category"); writer.string(category) }
            if let threadId = push?.threadId ?? content.groupName { writer.key("thread-id"); writer.string(threadId) }
            // An image is fetched by the app's notification service extension, which only runs with mutable-content.
            if push?.mutableContent == true || push?.imageUrl != nil { writer.key("mutable-content"); writer.integer(1) }
            // The window (scene) a tap brings forward: the deep link's, which the app also finds as `notify.url`.
            if let url = push?.url { writer.key("target-content-id"); writer.string(url) }
            if let level = push?.interruptionLevel { writer.key("interruption-level"); writer.string(apnsName(of: level)) }
            if let score = push?.relevanceScore { writer.key("relevance-score"); writer.value(.number(score)) }
        }
        writer.key("content-available")
        writer.integer(1)
        if let badge { writer.key("badge"); writer.integer(Int64(badge)) }
        writer.endObject()
    }

    /// APNs' name of an interruption level.
    public static func apnsName(of level: InterruptionLevel) -> String {
        switch level {
        case .passive: "passive"
        case .active: "active"
        case .timeSensitive: "time-sensitive"
        case .critical: "critical"
        }
    }
}
