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
                writer.writePublish(
                    type: "publishNotification", key: "notification", appId: notification.appId, audience: ("userId", notification.userId),
                    notificationId: notification.notificationId, content: notification.content, receivedAt: notification.receivedAt)
            case .publishBroadcast(let broadcast):
                writer.writePublish(
                    type: "publishBroadcast", key: "broadcast", appId: broadcast.appId, audience: ("eventSource", broadcast.eventSource),
                    notificationId: broadcast.notificationId, content: broadcast.content, receivedAt: broadcast.receivedAt)
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

extension JSONWriter {
    /// A publish action: `{"type", "<key>": {appId, <audience>, notificationId, content, receivedAt}}`.
    fileprivate mutating func writePublish(
        type: String, key: String, appId: String, audience: (key: String, value: String), notificationId: UUID,
        content: NotificationContent, receivedAt: Date
    ) {
        beginObject()
        self.key("type"); string(type)
        self.key(key)
        beginObject()
        self.key("appId"); string(appId)
        self.key(audience.key); string(audience.value)
        self.key("notificationId"); uuid(notificationId)
        self.key("content"); content.write(to: &self)
        self.key("receivedAt"); timestamp(receivedAt)
        endObject()
        endObject()
    }
}
