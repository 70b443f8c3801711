import Foundation

extension ChangeEventBatch {
    /// The batch as wire JSON, what `WireCoding`'s encoder says (UUIDs lowercase, absent optionals left out),
    /// written directly: the writing side of `init(decodingJSON:)`.
    public func encodedJSON() -> Data {
        var writer = JSONWriter(capacity: 32 + events.count * 640)
        writer.beginObject()
        writer.key("events")
        writer.beginArray()
        for event in events { event.write(to: &writer) }
        writer.endArray()
        writer.endObject()
        return Data(writer.bytes)
    }
}

extension ChangeEvent {
    func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("appId"); writer.string(appId)
        writer.key("userId"); writer.string(userId)
        writer.key("sequence"); writer.integer(sequence)
        writer.key("kind"); writer.string(kind.rawValue)
        writer.key("notificationId"); writer.uuid(notificationId)
        if let content {
            writer.key("content")
            content.write(to: &writer)
        }
        writer.key("readState"); writer.string(readState.rawValue)
        writer.key("userActionState"); writer.string(userActionState.rawValue)
        if let originSubscriptionId { writer.key("originSubscriptionId"); writer.uuid(originSubscriptionId) }
        writer.key("unreadCount"); writer.integer(Int64(unreadCount))
        writer.key("changedAt"); writer.timestamp(changedAt)
        if let eventSource { writer.key("eventSource"); writer.string(eventSource) }
        if let devicesVersion { writer.key("devicesVersion"); writer.integer(devicesVersion) }
        writer.endObject()
    }
}

extension NotificationContent {
    /// The content as wire JSON, what `WireCoding`'s encoder says, written directly (storage stores every one).
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

extension Array where Element == ChangeEvent {
    /// The events as JSON objects separated by commas (the inside of a batch's `events` array), for an outbox
    /// that frames them into `ChangeEventBatch` messages later.
    public func encodedJSONObjects() -> String {
        var writer = JSONWriter(capacity: 2 + count * 640)
        writer.beginArray()
        for event in self { event.write(to: &writer) }
        writer.endArray()
        return String(decoding: writer.bytes.dropFirst().dropLast(), as: UTF8.self)
    }
}
