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
        var recipients: [Recipient]??, pushRecipientsOnly: Bool??, memberFilter: [String: JSONValue]??
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
            case "recipients": try first(&recipients, &reader) { try $0.readArray { try Recipient(reading: &$0) } }
            case "pushRecipientsOnly": try first(&pushRecipientsOnly, &reader) { try $0.readBool() }
            case "where": try first(&memberFilter, &reader) { try $0.readObjectValue() }
            default: try reader.skipValue()
            }
        }
        self.init(
            userId: userId ?? nil, subscriptionId: subscriptionId ?? nil, eventSource: eventSource ?? nil,
            appNotificationId: appNotificationId ?? nil, groupName: groupName ?? nil, priority: priority ?? nil,
            expirationDateTime: expirationDateTime ?? nil, displayTimeToLive: displayTimeToLive ?? nil,
            targetPolicy: targetPolicy ?? nil, payload: payload ?? nil, push: push ?? nil, recipients: recipients ?? nil,
            pushRecipientsOnly: pushRecipientsOnly ?? nil, where: memberFilter ?? nil)
    }
}

extension Recipient {
    init(reading reader: inout JSONReader) throws {
        var userId: String??, push: PushOptions??
        try reader.readObject { reader, key in
            switch key {
            case "userId": try first(&userId, &reader) { try $0.readString() }
            case "push": try first(&push, &reader) { try PushOptions(reading: &$0) }
            default: try reader.skipValue()
            }
        }
        self.init(userId: userId ?? nil, push: push ?? nil)
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
        var sound: String??, criticalSound: Bool??, category: String??, threadId: String??
        var title: String??, subtitle: String??, body: String??
        var titleLocKey: String??, titleLocArgs: [String]??, bodyLocKey: String??, bodyLocArgs: [String]??
        var imageUrl: String??, launchImage: String??, mutableContent: Bool??, interruptionLevel: InterruptionLevel??
        var relevanceScore: Double??, badge: Int??, delivery: PushDelivery??, url: String??, androidChannelId: String??
        var data: [String: JSONValue]??
        try reader.readObject { reader, key in
            switch key {
            case "sound": try first(&sound, &reader) { try $0.readString() }
            case "criticalSound": try first(&criticalSound, &reader) { try $0.readBool() }
            case "category": try first(&category, &reader) { try $0.readString() }
            case "threadId": try first(&threadId, &reader) { try $0.readString() }
            case "title": try first(&title, &reader) { try $0.readString() }
            case "subtitle": try first(&subtitle, &reader) { try $0.readString() }
            case "body": try first(&body, &reader) { try $0.readString() }
            case "titleLocKey": try first(&titleLocKey, &reader) { try $0.readString() }
            case "titleLocArgs": try first(&titleLocArgs, &reader) { try $0.readArray { try $0.readString() } }
            case "bodyLocKey": try first(&bodyLocKey, &reader) { try $0.readString() }
            case "bodyLocArgs": try first(&bodyLocArgs, &reader) { try $0.readArray { try $0.readString() } }
            case "imageUrl": try first(&imageUrl, &reader) { try $0.readString() }
            case "launchImage": try first(&launchImage, &reader) { try $0.readString() }
            case "mutableContent": try first(&mutableContent, &reader) { try $0.readBool() }
            case "interruptionLevel": try first(&interruptionLevel, &reader) { try $0.readEnum(InterruptionLevel.self) }
            case "relevanceScore": try first(&relevanceScore, &reader) { try $0.readDouble() }
            case "badge": try first(&badge, &reader) { try $0.readInt() }
            case "delivery": try first(&delivery, &reader) { try $0.readEnum(PushDelivery.self) }
            case "url": try first(&url, &reader) { try $0.readString() }
            case "androidChannelId": try first(&androidChannelId, &reader) { try $0.readString() }
            case "data": try first(&data, &reader) { try $0.readObjectValue() }
            default: try reader.skipValue()
            }
        }
        self.init(
            sound: sound ?? nil, criticalSound: criticalSound ?? nil, category: category ?? nil, threadId: threadId ?? nil,
            title: title ?? nil, subtitle: subtitle ?? nil, body: body ?? nil, titleLocKey: titleLocKey ?? nil,
            titleLocArgs: titleLocArgs ?? nil, bodyLocKey: bodyLocKey ?? nil, bodyLocArgs: bodyLocArgs ?? nil, imageUrl: imageUrl ?? nil,
            launchImage: launchImage ?? nil, mutableContent: mutableContent ?? nil, interruptionLevel: interruptionLevel ?? nil,
            relevanceScore: relevanceScore ?? nil, badge: badge ?? nil, delivery: delivery ?? nil, url: url ?? nil,
            androidChannelId: androidChannelId ?? nil, data: data ?? nil)
    }
}

/// Reads a field's value (nil for null) the first time its key appears; a repeated key is skipped, as JSONDecoder
/// keeps the first.
private func first<Value>(_ slot: inout Value??, _ reader: inout JSONReader, _ read: (inout JSONReader) throws -> Value) throws {
    if slot == nil {
        slot = .some(try reader.readOptional(read))
    } else {
        try reader.skipValue()
    }
}
