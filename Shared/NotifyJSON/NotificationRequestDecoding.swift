import Foundation
import NotifyAPI

// Publish requests read without JSONDecoder: ingest reads every notification an app server publishes through
// here. It reads what `WireCoding.makeDecoder()` reads into `NotificationRequest`, the same values from the same
// documents: every field optional (absent or null is nil), unknown keys skipped, the first of a repeated key
// counting. Where JSONDecoder refuses a document, this throws a `JSONReadError` whose path names the field.

extension NotificationRequest {
    /// Reads one notification object.
    public init(reading reader: inout JSONReader) throws {
        var userId: String??, subscriptionId: String??, eventSource: String??, appNotificationId: String??
        var groupName: String??, priority: NotificationPriority??, expirationDateTime: Date??
        var displayTimeToLive: Int??, targetPolicy: TargetPolicy??, payload: NotificationPayload??, push: PushOptions??
        try reader.readObject { reader, key in
            switch key {
            case "userId" where userId == nil: userId = .some(try reader.readOptional { try $0.readString() })
            case "subscriptionId" where subscriptionId == nil: subscriptionId = .some(try reader.readOptional { try $0.readString() })
            case "eventSource" where eventSource == nil: eventSource = .some(try reader.readOptional { try $0.readString() })
            case "appNotificationId" where appNotificationId == nil: appNotificationId = .some(try reader.readOptional { try $0.readString() })
            case "groupName" where groupName == nil: groupName = .some(try reader.readOptional { try $0.readString() })
            case "priority" where priority == nil: priority = .some(try reader.readOptional { try $0.readEnum(NotificationPriority.self) })
            case "expirationDateTime" where expirationDateTime == nil: expirationDateTime = .some(try reader.readOptional { try $0.readTimestamp() })
            case "displayTimeToLive" where displayTimeToLive == nil: displayTimeToLive = .some(try reader.readOptional { try $0.readInt() })
            case "targetPolicy" where targetPolicy == nil: targetPolicy = .some(try reader.readOptional { try TargetPolicy(reading: &$0) })
            case "payload" where payload == nil: payload = .some(try reader.readOptional { try NotificationPayload(reading: &$0) })
            case "push" where push == nil: push = .some(try reader.readOptional { try PushOptions(reading: &$0) })
            default: try reader.skipValue()
            }
        }
        self.init(
            userId: userId ?? nil, subscriptionId: subscriptionId ?? nil, eventSource: eventSource ?? nil,
            appNotificationId: appNotificationId ?? nil, groupName: groupName ?? nil, priority: priority ?? nil,
            expirationDateTime: expirationDateTime ?? nil, displayTimeToLive: displayTimeToLive ?? nil,
            targetPolicy: targetPolicy ?? nil, payload: payload ?? nil, push: push ?? nil)
    }
}

extension TargetPolicy {
    init(reading reader: inout JSONReader) throws {
        var platformTypes: [Platform]??
        try reader.readObject { reader, key in
            switch key {
            case "platformTypes" where platformTypes == nil:
                platformTypes = .some(try reader.readOptional { try $0.readArray { try $0.readEnum(Platform.self) } })
            default: try reader.skipValue()
            }
        }
        self.init(platformTypes: platformTypes ?? nil)
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
