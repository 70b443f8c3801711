import Foundation

// Change events read without JSONDecoder: fanout reads every change through here.
//
// Each decoder reads exactly what `WireCoding.makeDecoder()` reads into the same type: unknown keys are
// skipped, an optional key may be absent or null, the first of a repeated key counts. A local of a required
// key is `T?` (nil: not seen yet); one of an optional key is `T??`, assigned `.some(...)` so that a null
// read is recorded as seen (`.some(nil)`).

extension ChangeEventBatch {
    /// Reads a `fanout.changes` message. Throws `JSONReadError`.
    public init(decodingJSON document: some ContiguousBytes) throws {
        self = try JSONReader.read(document) { try ChangeEventBatch(reading: &$0) }
    }

    init(reading reader: inout JSONReader) throws {
        var events: [ChangeEvent]?
        try reader.readObject { reader, key in
            switch key {
            case "events" where events == nil: events = try reader.readArray { try ChangeEvent(reading: &$0) }
            default: try reader.skipValue()
            }
        }
        self.init(events: try reader.required(events, "events"))
    }
}

extension ChangeEvent {
    init(reading reader: inout JSONReader) throws {
        var appId: String?, userId: String?, sequence: Int64?, kind: ChangeKind?, notificationId: UUID?
        var content: NotificationContent??, readState: ReadState?, userActionState: UserActionState?
        var originSubscriptionId: UUID??, unreadCount: Int?, changedAt: Date?, eventSource: String??, devicesVersion: Int64??
        try reader.readObject { reader, key in
            switch key {
            case "appId" where appId == nil: appId = try reader.readString()
            case "userId" where userId == nil: userId = try reader.readString()
            case "sequence" where sequence == nil: sequence = try reader.readInt64()
            case "kind" where kind == nil: kind = try reader.readEnum(ChangeKind.self)
            case "notificationId" where notificationId == nil: notificationId = try reader.readUUID()
            case "content" where content == nil: content = .some(try reader.readOptional { try NotificationContent(reading: &$0) })
            case "readState" where readState == nil: readState = try reader.readEnum(ReadState.self)
            case "userActionState" where userActionState == nil: userActionState = try reader.readEnum(UserActionState.self)
            case "originSubscriptionId" where originSubscriptionId == nil: originSubscriptionId = .some(try reader.readOptional { try $0.readUUID() })
            case "unreadCount" where unreadCount == nil: unreadCount = try reader.readInt()
            case "changedAt" where changedAt == nil: changedAt = try reader.readTimestamp()
            case "eventSource" where eventSource == nil: eventSource = .some(try reader.readOptional { try $0.readString() })
            case "devicesVersion" where devicesVersion == nil: devicesVersion = .some(try reader.readOptional { try $0.readInt64() })
            default: try reader.skipValue()
            }
        }
        try self.init(
            appId: reader.required(appId, "appId"), userId: reader.required(userId, "userId"),
            sequence: reader.required(sequence, "sequence"), kind: reader.required(kind, "kind"),
            notificationId: reader.required(notificationId, "notificationId"), content: content ?? nil,
            readState: reader.required(readState, "readState"), userActionState: reader.required(userActionState, "userActionState"),
            originSubscriptionId: originSubscriptionId ?? nil, unreadCount: reader.required(unreadCount, "unreadCount"),
            changedAt: reader.required(changedAt, "changedAt"), eventSource: eventSource ?? nil, devicesVersion: devicesVersion ?? nil)
    }
}

extension NotificationContent {
    init(reading reader: inout JSONReader) throws {
        var appNotificationId: String??, groupName: String??, priority: NotificationPriority?, expirationDateTime: Date?
        var displayTimeToLive: Int??, platformTypes: [Platform]??, payload: NotificationPayload?, push: PushOptions??
        try reader.readObject { reader, key in
            switch key {
            case "appNotificationId" where appNotificationId == nil: appNotificationId = .some(try reader.readOptional { try $0.readString() })
            case "groupName" where groupName == nil: groupName = .some(try reader.readOptional { try $0.readString() })
            case "priority" where priority == nil: priority = try reader.readEnum(NotificationPriority.self)
            case "expirationDateTime" where expirationDateTime == nil: expirationDateTime = try reader.readTimestamp()
            case "displayTimeToLive" where displayTimeToLive == nil: displayTimeToLive = .some(try reader.readOptional { try $0.readInt() })
            case "platformTypes" where platformTypes == nil:
                platformTypes = .some(try reader.readOptional { try $0.readArray { try $0.readEnum(Platform.self) } })
            case "payload" where payload == nil: payload = try NotificationPayload(reading: &reader)
            case "push" where push == nil: push = .some(try reader.readOptional { try PushOptions(reading: &$0) })
            default: try reader.skipValue()
            }
        }
        try self.init(
            appNotificationId: appNotificationId ?? nil, groupName: groupName ?? nil, priority: reader.required(priority, "priority"),
            expirationDateTime: reader.required(expirationDateTime, "expirationDateTime"), displayTimeToLive: displayTimeToLive ?? nil,
            platformTypes: platformTypes ?? nil, payload: reader.required(payload, "payload"), push: push ?? nil)
    }
}

extension NotificationPayload {
    init(reading reader: inout JSONReader) throws {
        var rawContent: String??, visualContent: VisualContent??
        try reader.readObject { reader, key in
            switch key {
            case "rawContent" where rawContent == nil: rawContent = .some(try reader.readOptional { try $0.readString() })
            case "visualContent" where visualContent == nil: visualContent = .some(try reader.readOptional { try VisualContent(reading: &$0) })
            default: try reader.skipValue()
            }
        }
        self.init(rawContent: rawContent ?? nil, visualContent: visualContent ?? nil)
    }
}

extension VisualContent {
    init(reading reader: inout JSONReader) throws {
        var title: String??, body: String??
        try reader.readObject { reader, key in
            switch key {
            case "title" where title == nil: title = .some(try reader.readOptional { try $0.readString() })
            case "body" where body == nil: body = .some(try reader.readOptional { try $0.readString() })
            default: try reader.skipValue()
            }
        }
        self.init(title: title ?? nil, body: body ?? nil)
    }
}

extension PushOptions {
    init(reading reader: inout JSONReader) throws {
        var sound: String??, category: String??, threadId: String??, data: [String: JSONValue]??
        try reader.readObject { reader, key in
            switch key {
            case "sound" where sound == nil: sound = .some(try reader.readOptional { try $0.readString() })
            case "category" where category == nil: category = .some(try reader.readOptional { try $0.readString() })
            case "threadId" where threadId == nil: threadId = .some(try reader.readOptional { try $0.readString() })
            case "data" where data == nil: data = .some(try reader.readOptional { try $0.readObjectValue() })
            default: try reader.skipValue()
            }
        }
        self.init(sound: sound ?? nil, category: category ?? nil, threadId: threadId ?? nil, data: data ?? nil)
    }
}
