import Foundation
import NotifyJSON

extension NotificationContent {
    /// The content as stored and as the API shows it: JSON as `WireCoding`'s encoder writes it, written directly
    /// (storage stores every notification's content).
    public func encodedJSONString() -> String {
        var writer = JSONWriter(capacity: 384)
        write(to: &writer)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    func write(to writer: inout JSONWriter) {
        writer.beginObject()
        if let appNotificationId { writer.key("appNotificationId"); writer.string(appNotificationId) }
        if let groupName { writer.key("groupName"); writer.string(groupName) }
        writer.key("priority"); writer.string(priority.rawValue)
        writer.key("expirationDateTime"); writer.timestamp(expirationDateTime)
        if let displayTimeToLive { writer.key("displayTimeToLive"); writer.integer(Int64(displayTimeToLive)) }
        if let platformTypes {
            writer.key("platformTypes")
            writer.beginArray()
            for platform in platformTypes { writer.string(platform.rawValue) }
            writer.endArray()
        }
        writer.key("payload")
        writer.beginObject()
        if let rawContent = payload.rawContent { writer.key("rawContent"); writer.string(rawContent) }
        if let visualContent = payload.visualContent {
            writer.key("visualContent")
            writer.beginObject()
            if let title = visualContent.title { writer.key("title"); writer.string(title) }
            if let body = visualContent.body { writer.key("body"); writer.string(body) }
            writer.endObject()
        }
        writer.endObject()
        if let push {
            writer.key("push")
            writer.beginObject()
            if let sound = push.sound { writer.key("sound"); writer.string(sound) }
            if let criticalSound = push.criticalSound { writer.key("criticalSound"); writer.bool(criticalSound) }
            if let category = push.category { writer.key("category"); writer.string(category) }
            if let threadId = push.threadId { writer.key("threadId"); writer.string(threadId) }
            if let title = push.title { writer.key("title"); writer.string(title) }
            if let subtitle = push.subtitle { writer.key("subtitle"); writer.string(subtitle) }
            if let body = push.body { writer.key("body"); writer.string(body) }
            if let key = push.titleLocKey { writer.key("titleLocKey"); writer.string(key) }
            if let args = push.titleLocArgs { writer.key("titleLocArgs"); writer.strings(args) }
            if let key = push.bodyLocKey { writer.key("bodyLocKey"); writer.string(key) }
            if let args = push.bodyLocArgs { writer.key("bodyLocArgs"); writer.strings(args) }
            if let imageUrl = push.imageUrl { writer.key("imageUrl"); writer.string(imageUrl) }
            if let launchImage = push.launchImage { writer.key("launchImage"); writer.string(launchImage) }
            if let mutableContent = push.mutableContent { writer.key("mutableContent"); writer.bool(mutableContent) }
            if let level = push.interruptionLevel { writer.key("interruptionLevel"); writer.string(level.rawValue) }
            if let score = push.relevanceScore { writer.key("relevanceScore"); writer.value(.number(score)) }
            if let badge = push.badge { writer.key("badge"); writer.integer(Int64(badge)) }
            if let delivery = push.delivery { writer.key("delivery"); writer.string(delivery.rawValue) }
            if let url = push.url { writer.key("url"); writer.string(url) }
            if let channel = push.androidChannelId { writer.key("androidChannelId"); writer.string(channel) }
            if let data = push.data { writer.key("data"); writer.value(.object(data)) }
            writer.endObject()
        }
        writer.endObject()
    }
}
