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
            if let category = push.category { writer.key("category"); writer.string(category) }
            if let threadId = push.threadId { writer.key("threadId"); writer.string(threadId) }
            if let data = push.data { writer.key("data"); writer.value(.object(data)) }
            writer.endObject()
        }
        writer.endObject()
    }
}
