import Foundation
import NotifyModels
import SwiftProtobuf

// The domain's values in their protobuf forms and back. A value outside its domain (an unknown enum case, an id
// that is not 16 bytes) throws `WireDecodingError.malformed`, naming the field.

extension UUID {
    var wireBytes: Data { withUnsafeBytes(of: uuid) { Data($0) } }

    init(wire bytes: Data, _ field: @autoclosure () -> String) throws(WireDecodingError) {
        guard bytes.count == 16 else { throw WireDecodingError(.malformed, "\(field()) is not 16 bytes") }
        self = bytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
    }
}

extension [UUID] {
    var wireList: WireSubscriptionIdList {
        var list = WireSubscriptionIdList()
        list.ids = map(\.wireBytes)
        return list
    }

    init(wire list: WireSubscriptionIdList, _ field: @autoclosure () -> String) throws(WireDecodingError) {
        self = []
        reserveCapacity(list.ids.count)
        for (index, bytes) in list.ids.enumerated() { append(try UUID(wire: bytes, "\(field()).ids[\(index)]")) }
    }
}

extension EventSourcePolicy {
    var wire: WireEventSourcePolicy {
        switch self {
        case .open: .open
        case .appServer: .appServer
        }
    }

    init(wire: WireEventSourcePolicy, _ field: @autoclosure () -> String) throws(WireDecodingError) {
        switch wire {
        case .open: self = .open
        case .appServer: self = .appServer
        case .unspecified, .UNRECOGNIZED: throw invalidEnum(field(), wire)
        }
    }
}

extension PushOptions {
    var wire: WirePushOptions {
        var push = WirePushOptions()
        if let sound { push.sound = sound }
        if let category { push.category = category }
        if let threadId { push.threadID = threadId }
        if let badge { push.badge = Int64(badge) }
        if let delivery { push.delivery = delivery.wire }
        if hasAlertOptions, let alert = try? wireAlert.serializedBytes() as Data { push.alert = alert }
        if let data { push.data = data.wireStruct }
        return push
    }

    init(wire push: WirePushOptions, _ field: @autoclosure () -> String) throws(WireDecodingError) {
        let alert: WireAlertOptions?
        do {
            alert = push.hasAlert ? try WireAlertOptions(serializedBytes: push.alert) : nil
        } catch {
            throw WireDecodingError(.malformed, "\(field()).alert is not an AlertOptions message")
        }
        self.init(
            sound: push.hasSound ? push.sound : nil, criticalSound: alert?.hasCriticalSound == true ? alert?.criticalSound : nil,
            category: push.hasCategory ? push.category : nil, threadId: push.hasThreadID ? push.threadID : nil,
            title: alert?.hasTitle == true ? alert?.title : nil, subtitle: alert?.hasSubtitle == true ? alert?.subtitle : nil,
            body: alert?.hasBody == true ? alert?.body : nil,
            titleLocKey: alert?.hasTitleLocKey == true ? alert?.titleLocKey : nil,
            titleLocArgs: alert?.hasTitleLocArgs == true ? alert?.titleLocArgs.values : nil,
            bodyLocKey: alert?.hasBodyLocKey == true ? alert?.bodyLocKey : nil,
            bodyLocArgs: alert?.hasBodyLocArgs == true ? alert?.bodyLocArgs.values : nil,
            imageUrl: alert?.hasImageURL == true ? alert?.imageURL : nil,
            launchImage: alert?.hasLaunchImage == true ? alert?.launchImage : nil,
            mutableContent: alert?.hasMutableContent == true ? alert?.mutableContent : nil,
            interruptionLevel: try alert.flatMap { alert throws(WireDecodingError) in
                alert.interruptionLevel == .unspecified
                    ? nil : try InterruptionLevel(wire: alert.interruptionLevel, "\(field()).alert.interruption_level")
            },
            relevanceScore: alert?.hasRelevanceScore == true ? alert?.relevanceScore : nil,
            badge: push.hasBadge ? Int(push.badge) : nil,
            delivery: push.delivery == .unspecified ? nil : try PushDelivery(wire: push.delivery, "\(field()).delivery"),
            url: alert?.hasURL == true ? alert?.url : nil,
            androidChannelId: alert?.hasAndroidChannelID == true ? alert?.androidChannelID : nil,
            data: push.hasData ? [String: JSONValue](wire: push.data) : nil)
    }

    /// Whether any option that shapes an alert is set (they travel in a sub-message, absent otherwise).
    var hasAlertOptions: Bool {
        criticalSound != nil || title != nil || subtitle != nil || body != nil || titleLocKey != nil || titleLocArgs != nil
            || bodyLocKey != nil || bodyLocArgs != nil || imageUrl != nil || launchImage != nil || mutableContent != nil || interruptionLevel != nil || relevanceScore != nil
            || url != nil || androidChannelId != nil
    }

    var wireAlert: WireAlertOptions {
        var alert = WireAlertOptions()
        if let criticalSound { alert.criticalSound = criticalSound }
        if let title { alert.title = title }
        if let subtitle { alert.subtitle = subtitle }
        if let body { alert.body = body }
        if let titleLocKey { alert.titleLocKey = titleLocKey }
        if let titleLocArgs { alert.titleLocArgs.values = titleLocArgs }
        if let bodyLocKey { alert.bodyLocKey = bodyLocKey }
        if let bodyLocArgs { alert.bodyLocArgs.values = bodyLocArgs }
        if let imageUrl { alert.imageURL = imageUrl }
        if let launchImage { alert.launchImage = launchImage }
        if let mutableContent { alert.mutableContent = mutableContent }
        if let interruptionLevel { alert.interruptionLevel = interruptionLevel.wire }
        if let relevanceScore { alert.relevanceScore = relevanceScore }
        if let url { alert.url = url }
        if let androidChannelId { alert.androidChannelID = androidChannelId }
        return alert
    }
}

extension Dictionary where Key == String, Value == PushOptions {
    /// Members' own push options from a `map<string, PushOptions>`; an empty map is none (nil).
    init?(wire: [String: WirePushOptions], _ field: @autoclosure () -> String) throws(WireDecodingError) {
        guard !wire.isEmpty else { return nil }
        var options: [String: PushOptions] = [:]
        for (userId, push) in wire { options[userId] = try PushOptions(wire: push, "\(field())[\(userId)]") }
        self = options
    }
}

extension InterruptionLevel {
    var wire: WireInterruptionLevel {
        switch self {
        case .passive: .passive
        case .active: .active
        case .timeSensitive: .timeSensitive
        case .critical: .critical
        }
    }

    init(wire: WireInterruptionLevel, _ field: @autoclosure () -> String) throws(WireDecodingError) {
        switch wire {
        case .passive: self = .passive
        case .active: self = .active
        case .timeSensitive: self = .timeSensitive
        case .critical: self = .critical
        case .unspecified, .UNRECOGNIZED: throw invalidEnum(field(), wire)
        }
    }
}

extension PushDelivery {
    var wire: WirePushDelivery {
        switch self {
        case .alert: .alert
        case .silent: .silent
        case .none: .none
        }
    }

    init(wire: WirePushDelivery, _ field: @autoclosure () -> String) throws(WireDecodingError) {
        switch wire {
        case .alert: self = .alert
        case .silent: self = .silent
        case .none: self = .none
        case .unspecified, .UNRECOGNIZED: throw invalidEnum(field(), wire)
        }
    }
}

extension BadgeMode {
    var wire: WireBadgeMode {
        switch self {
        case .unread: .unread
        case .unreadIncludingBroadcasts: .unreadIncludingBroadcasts
        case .unreadGroups: .unreadGroups
        case .unreadGroupsIncludingBroadcasts: .unreadGroupsIncludingBroadcasts
        case .external: .external
        case .externalIncludingBroadcasts: .externalIncludingBroadcasts
        case .none: .none
        }
    }

    init(wire: WireBadgeMode, _ field: @autoclosure () -> String) throws(WireDecodingError) {
        switch wire {
        case .unread: self = .unread
        case .unreadIncludingBroadcasts: self = .unreadIncludingBroadcasts
        case .unreadGroups: self = .unreadGroups
        case .unreadGroupsIncludingBroadcasts: self = .unreadGroupsIncludingBroadcasts
        case .external: self = .external
        case .externalIncludingBroadcasts: self = .externalIncludingBroadcasts
        case .none: self = .none
        case .unspecified, .UNRECOGNIZED: throw invalidEnum(field(), wire)
        }
    }
}

extension UUID {
    /// The first and last 8 bytes, each read as a big-endian integer (the fixed64 halves of the per-push messages).
    var wireHalves: (high: UInt64, low: UInt64) {
        withUnsafeBytes(of: uuid) { bytes in
            (UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self)), UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
        }
    }

    /// Both halves zero is an absent id.
    init(wireHigh high: UInt64, low: UInt64, _ field: @autoclosure () -> String) throws(WireDecodingError) {
        guard high != 0 || low != 0 else { throw WireDecodingError(.malformed, "\(field()) is missing") }
        self = withUnsafeBytes(of: (high.bigEndian, low.bigEndian)) { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
    }
}

extension Date {
    /// Microseconds since 1970, rounded to the nearest.
    var wireMicros: Int64 { Int64((timeIntervalSince1970 * 1_000_000).rounded()) }

    init(wireMicros micros: Int64) { self.init(timeIntervalSince1970: Double(micros) / 1_000_000) }
}

/// A proto enum's unknown or unset value, reported against its field.
func invalidEnum(_ field: @autoclosure () -> String, _ value: some SwiftProtobuf.Enum) -> WireDecodingError {
    WireDecodingError(.malformed, "\(field()) has no value this build knows (\(value.rawValue))")
}

extension Platform {
    var wire: WirePlatform {
        switch self {
        case .apns: .apns
        case .apnsVoip: .apnsVoip
        case .fcm: .fcm
        case .wns: .wns
        case .webpush: .webpush
        case .polling: .polling
        }
    }

    init(wire: WirePlatform, _ field: @autoclosure () -> String) throws(WireDecodingError) {
        switch wire {
        case .apns: self = .apns
        case .apnsVoip: self = .apnsVoip
        case .fcm: self = .fcm
        case .wns: self = .wns
        case .webpush: self = .webpush
        case .polling: self = .polling
        case .unspecified, .UNRECOGNIZED: throw invalidEnum(field(), wire)
        }
    }
}

extension NotificationPriority {
    var wire: WirePriority {
        switch self {
        case .high: .high
        case .low: .low
        case .none: .none
        }
    }

    init(wire: WirePriority, _ field: @autoclosure () -> String) throws(WireDecodingError) {
        switch wire {
        case .high: self = .high
        case .low: self = .low
        case .none: self = .none
        case .unspecified, .UNRECOGNIZED: throw invalidEnum(field(), wire)
        }
    }
}

extension ChangeKind {
    var wire: WireChangeKind {
        switch self {
        case .created: .created
        case .updated: .updated
        case .stateChanged: .stateChanged
        case .deleted: .deleted
        case .expired: .expired
        case .removed: .removed
        }
    }

    init(wire: WireChangeKind, _ field: @autoclosure () -> String) throws(WireDecodingError) {
        switch wire {
        case .created: self = .created
        case .updated: self = .updated
        case .stateChanged: self = .stateChanged
        case .deleted: self = .deleted
        case .expired: self = .expired
        case .removed: self = .removed
        case .unspecified, .UNRECOGNIZED: throw invalidEnum(field(), wire)
        }
    }
}

extension ReadState {
    var wire: WireReadState {
        switch self {
        case .unread: .unread
        case .read: .read
        }
    }

    init(wire: WireReadState, _ field: @autoclosure () -> String) throws(WireDecodingError) {
        switch wire {
        case .unread: self = .unread
        case .read: self = .read
        case .unspecified, .UNRECOGNIZED: throw invalidEnum(field(), wire)
        }
    }
}

extension UserActionState {
    var wire: WireUserActionState {
        switch self {
        case .noInteraction: .noInteraction
        case .activated: .activated
        case .dismissed: .dismissed
        case .snoozed: .snoozed
        }
    }

    init(wire: WireUserActionState, _ field: @autoclosure () -> String) throws(WireDecodingError) {
        switch wire {
        case .noInteraction: self = .noInteraction
        case .activated: self = .activated
        case .dismissed: self = .dismissed
        case .snoozed: self = .snoozed
        case .unspecified, .UNRECOGNIZED: throw invalidEnum(field(), wire)
        }
    }
}

extension WebPushKeys {
    var wire: WireWebPushKeys {
        var keys = WireWebPushKeys()
        keys.p256Dh = p256dh
        keys.auth = auth
        return keys
    }

    init(wire: WireWebPushKeys) {
        self.init(p256dh: wire.p256Dh, auth: wire.auth)
    }
}

extension NotificationContent {
    var wire: WireNotificationContent {
        var content = WireNotificationContent()
        if let appNotificationId { content.appNotificationID = appNotificationId }
        if let groupName { content.groupName = groupName }
        content.priority = priority.wire
        content.expirationMicros = expirationDateTime.wireMicros
        if let displayTimeToLive { content.displayTimeToLive = Int64(displayTimeToLive) }
        if let platformTypes { content.platformTypes.platforms = platformTypes.map(\.wire) }
        if let rawContent = payload.rawContent { content.rawContent = rawContent }
        if let visual = payload.visualContent {
            content.visualContent = WireVisualContent()
            if let title = visual.title { content.visualContent.title = title }
            if let body = visual.body { content.visualContent.body = body }
        }
        if let push { content.push = push.wire }
        return content
    }

    init(wire: WireNotificationContent, _ field: @autoclosure () -> String) throws(WireDecodingError) {
        let push = wire.hasPush ? wire.push : nil
        self.init(
            appNotificationId: wire.hasAppNotificationID ? wire.appNotificationID : nil,
            groupName: wire.hasGroupName ? wire.groupName : nil,
            priority: try NotificationPriority(wire: wire.priority, "\(field()).priority"),
            expirationDateTime: Date(wireMicros: wire.expirationMicros),
            displayTimeToLive: wire.hasDisplayTimeToLive ? Int(wire.displayTimeToLive) : nil,
            platformTypes: wire.hasPlatformTypes ? try wire.platformTypes.platforms.enumerated().map { (index, platform) throws(WireDecodingError) in
                try Platform(wire: platform, "\(field()).platform_types[\(index)]")
            } : nil,
            payload: NotificationPayload(
                rawContent: wire.hasRawContent ? wire.rawContent : nil,
                visualContent: wire.hasVisualContent
                    ? VisualContent(
                        title: wire.visualContent.hasTitle ? wire.visualContent.title : nil,
                        body: wire.visualContent.hasBody ? wire.visualContent.body : nil)
                    : nil),
            push: try push.map { push throws(WireDecodingError) in try PushOptions(wire: push, "\(field()).push") })
    }
}

extension [String: JSONValue] {
    /// The object as a protobuf `Struct` (app data, membership parameters, a broadcast's `where`).
    var wireStruct: Google_Protobuf_Struct { Google_Protobuf_Struct(fields: mapValues(\.wire)) }

    init(wire: Google_Protobuf_Struct) { self = wire.fields.mapValues(JSONValue.init(wire:)) }
}

extension JSONValue {
    var wire: Google_Protobuf_Value {
        switch self {
        case .null: nil
        case .bool(let value): Google_Protobuf_Value(boolValue: value)
        case .number(let value): Google_Protobuf_Value(numberValue: value)
        case .string(let value): Google_Protobuf_Value(stringValue: value)
        case .array(let values): Google_Protobuf_Value(listValue: Google_Protobuf_ListValue(values: values.map(\.wire)))
        case .object(let fields): Google_Protobuf_Value(structValue: Google_Protobuf_Struct(fields: fields.mapValues(\.wire)))
        }
    }

    init(wire: Google_Protobuf_Value) {
        switch wire.kind {
        case .nullValue, nil: self = .null
        case .boolValue(let value): self = .bool(value)
        case .numberValue(let value): self = .number(value)
        case .stringValue(let value): self = .string(value)
        case .listValue(let list): self = .array(list.values.map(JSONValue.init(wire:)))
        case .structValue(let object): self = .object(object.fields.mapValues(JSONValue.init(wire:)))
        }
    }
}
