import Foundation

// Storage commands read without JSONDecoder where it counts: storage reads every notification's publish
// command through here. The rules are those of ChangeEventBatchDecoding.swift: what `WireCoding.makeDecoder()`
// reads, the same values from the same documents, an error wherever it refuses one.

extension StorageCommandBatch {
    /// Reads a `storage.commands` message. Publishes are read directly; the rare other commands are handed to
    /// JSONDecoder. Throws `JSONReadError` or `DecodingError`.
    public init(decodingJSON document: some ContiguousBytes) throws {
        self = try JSONReader.read(document) { reader in
            var commands: [StorageCommand]?
            try reader.readObject { reader, key in
                switch key {
                case "commands" where commands == nil: commands = try reader.readArray { try StorageCommand(reading: &$0) }
                default: try reader.skipValue()
                }
            }
            return StorageCommandBatch(commands: try reader.required(commands, "commands"))
        }
    }
}

extension StorageCommand {
    init(reading reader: inout JSONReader) throws {
        var commandId: UUID?, issuedAt: Date?, action: Action?
        try reader.readObject { reader, key in
            switch key {
            case "commandId" where commandId == nil: commandId = try reader.readUUID()
            case "issuedAt" where issuedAt == nil: issuedAt = try reader.readTimestamp()
            case "action" where action == nil: action = try reader.readRawValue { try Action(decodingJSON: $0) }
            default: try reader.skipValue()
            }
        }
        try self.init(
            commandId: reader.required(commandId, "commandId"), issuedAt: reader.required(issuedAt, "issuedAt"),
            action: reader.required(action, "action"))
    }
}

extension StorageCommand.Action {
    /// An action from its JSON object. Its `type` is looked up first (it need not come first); a publish is
    /// then read directly, anything else decoded by JSONDecoder.
    init(decodingJSON raw: UnsafeRawBufferPointer) throws {
        let type: String? = try JSONReader.read(raw) { reader in
            var type: String?
            try reader.readObject { reader, key in
                switch key {
                case "type" where type == nil: type = try reader.readString()
                default: try reader.skipValue()
                }
            }
            return type
        }
        switch type {
        case "publishNotification":
            self = .publishNotification(try Self.readMember("notification", of: raw) { try PublishedNotification(reading: &$0) })
        case "publishBroadcast":
            self = .publishBroadcast(try Self.readMember("broadcast", of: raw) { try PublishedBroadcast(reading: &$0) })
        default:
            self = try WireCoding.makeDecoder().decode(StorageCommand.Action.self, from: Data(raw))
        }
    }

    private static func readMember<Value>(_ name: StaticString, of raw: UnsafeRawBufferPointer, _ read: (inout JSONReader) throws -> Value) throws -> Value {
        try JSONReader.read(raw) { reader in
            var value: Value?
            try reader.readObject { reader, key in
                if value == nil && name ~= key { value = try read(&reader) } else { try reader.skipValue() }
            }
            return try reader.required(value, name)
        }
    }
}

extension PublishedNotification {
    init(reading reader: inout JSONReader) throws {
        var appId: String?, userId: String?, notificationId: UUID?, content: NotificationContent?, receivedAt: Date?
        try reader.readObject { reader, key in
            switch key {
            case "appId" where appId == nil: appId = try reader.readString()
            case "userId" where userId == nil: userId = try reader.readString()
            case "notificationId" where notificationId == nil: notificationId = try reader.readUUID()
            case "content" where content == nil: content = try NotificationContent(reading: &reader)
            case "receivedAt" where receivedAt == nil: receivedAt = try reader.readTimestamp()
            default: try reader.skipValue()
            }
        }
        try self.init(
            appId: reader.required(appId, "appId"), userId: reader.required(userId, "userId"),
            notificationId: reader.required(notificationId, "notificationId"), content: reader.required(content, "content"),
            receivedAt: reader.required(receivedAt, "receivedAt"))
    }
}

extension PublishedBroadcast {
    init(reading reader: inout JSONReader) throws {
        var appId: String?, eventSource: String?, notificationId: UUID?, content: NotificationContent?, receivedAt: Date?
        try reader.readObject { reader, key in
            switch key {
            case "appId" where appId == nil: appId = try reader.readString()
            case "eventSource" where eventSource == nil: eventSource = try reader.readString()
            case "notificationId" where notificationId == nil: notificationId = try reader.readUUID()
            case "content" where content == nil: content = try NotificationContent(reading: &reader)
            case "receivedAt" where receivedAt == nil: receivedAt = try reader.readTimestamp()
            default: try reader.skipValue()
            }
        }
        try self.init(
            appId: reader.required(appId, "appId"), eventSource: reader.required(eventSource, "eventSource"),
            notificationId: reader.required(notificationId, "notificationId"), content: reader.required(content, "content"),
            receivedAt: reader.required(receivedAt, "receivedAt"))
    }
}
