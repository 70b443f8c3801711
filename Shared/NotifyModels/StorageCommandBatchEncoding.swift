import Foundation

extension StorageCommandBatch {
    /// The message as wire JSON, what `WireCoding`'s encoder says (UUIDs lowercase). The commands sent for
    /// every notification (publishes) are written directly; the rare others are encoded by `JSONEncoder`.
    public func encodedJSON() throws -> Data {
        var writer = JSONWriter(capacity: 32 + commands.count * 768)
        writer.beginObject()
        writer.key("commands")
        writer.beginArray()
        for command in commands {
            writer.beginObject()
            writer.key("commandId"); writer.uuid(command.commandId)
            writer.key("issuedAt"); writer.timestamp(command.issuedAt)
            writer.key("action")
            switch command.action {
            case .publishNotification(let notification):
                writer.beginObject()
                writer.key("type"); writer.string("publishNotification")
                writer.key("notification")
                writer.beginObject()
                writer.key("appId"); writer.string(notification.appId)
                writer.key("userId"); writer.string(notification.userId)
                writer.key("notificationId"); writer.uuid(notification.notificationId)
                writer.key("content"); notification.content.write(to: &writer)
                writer.key("receivedAt"); writer.timestamp(notification.receivedAt)
                writer.endObject()
                writer.endObject()
            case .publishBroadcast(let broadcast):
                writer.beginObject()
                writer.key("type"); writer.string("publishBroadcast")
                writer.key("broadcast")
                writer.beginObject()
                writer.key("appId"); writer.string(broadcast.appId)
                writer.key("eventSource"); writer.string(broadcast.eventSource)
                writer.key("notificationId"); writer.uuid(broadcast.notificationId)
                writer.key("content"); broadcast.content.write(to: &writer)
                writer.key("receivedAt"); writer.timestamp(broadcast.receivedAt)
                writer.endObject()
                writer.endObject()
            default:
                writer.rawValue(Array(try WireCoding.makeEncoder().encode(command.action)))
            }
            writer.endObject()
        }
        writer.endArray()
        writer.endObject()
        return Data(writer.bytes)
    }
}
