import Foundation

/// A notification exactly as an app server sends it (HTTP body or AMQP message).
public struct NotificationRequest: Codable, Sendable, Equatable {
    /// Target: the user every device of whom receives it.
    public var userId: String?
    /// Target: one device subscription (not yet supported as a target).
    public var subscriptionId: String?
    /// Target: every subscriber of an event source (not yet supported as a target).
    public var eventSource: String?
    /// Publishing again with the same id replaces the stored notification.
    public var appNotificationId: String?
    public var groupName: String?
    public var priority: NotificationPriority?
    public var expirationDateTime: Date?
    /// Seconds the notification stays visible on a device.
    public var displayTimeToLive: Int?
    public var targetPolicy: TargetPolicy?
    public var payload: NotificationPayload?
    public var push: PushOptions?

    public init(
        userId: String? = nil, subscriptionId: String? = nil, eventSource: String? = nil,
        appNotificationId: String? = nil, groupName: String? = nil, priority: NotificationPriority? = nil,
        expirationDateTime: Date? = nil, displayTimeToLive: Int? = nil, targetPolicy: TargetPolicy? = nil,
        payload: NotificationPayload? = nil, push: PushOptions? = nil
    ) {
        self.userId = userId
        self.subscriptionId = subscriptionId
        self.eventSource = eventSource
        self.appNotificationId = appNotificationId
        self.groupName = groupName
        self.priority = priority
        self.expirationDateTime = expirationDateTime
        self.displayTimeToLive = displayTimeToLive
        self.targetPolicy = targetPolicy
        self.payload = payload
        self.push = push
    }
}

/// Restricts delivery to some platforms.
public struct TargetPolicy: Codable, Sendable, Equatable {
    public var platformTypes: [Platform]?
    public init(platformTypes: [Platform]?) { self.platformTypes = platformTypes }
}

/// What the notification carries: app-defined raw content, visual content, or both.
public struct NotificationPayload: Codable, Sendable, Equatable {
    public var rawContent: String?
    public var visualContent: VisualContent?
    public init(rawContent: String? = nil, visualContent: VisualContent? = nil) {
        self.rawContent = rawContent
        self.visualContent = visualContent
    }
}

/// The title and body an alert shows.
public struct VisualContent: Codable, Sendable, Equatable {
    public var title: String?
    public var body: String?
    public init(title: String? = nil, body: String? = nil) {
        self.title = title
        self.body = body
    }
}

/// Per-notification push presentation options (Layer-style).
public struct PushOptions: Codable, Sendable, Equatable {
    public var sound: String?
    public var category: String?
    public var threadId: String?
    /// App-defined keys added to the push payload.
    public var data: [String: JSONValue]?
    public init(sound: String? = nil, category: String? = nil, threadId: String? = nil, data: [String: JSONValue]? = nil) {
        self.sound = sound
        self.category = category
        self.threadId = threadId
        self.data = data
    }
}
