import Foundation

/// A notification exactly as an app server sends it (HTTP body or AMQP message).
public struct NotificationRequest: Codable, Sendable, Equatable {
    /// Target: the user every device of whom receives it.
    public var userId: String?
    /// Target: exactly this device subscription (the notification is in its user's feed on every device).
    public var subscriptionId: String?
    /// Target: every member of an event source (a broadcast), or with `userId`, that user's devices in the source (a
    /// user with none in it is refused, 404 `not_subscribed`).
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
    /// Target: several users, each with its own copy and, optionally, its own push options over `push` (instead of
    /// `userId`; at most 500). Answered as a batch is, an item per recipient.
    public var recipients: [Recipient]?
    /// With `recipients`: only the recipients that give a `push` of their own are pushed; the others (a broadcast's
    /// members not listed, recipients listed without `push`) get the notification in their feed and badge, unpushed.
    public var pushRecipientsOnly: Bool?
    /// With `eventSource` alone (a broadcast): only the members whose membership parameters hold every one of these
    /// pairs (equal values) get it, in their feeds and on their devices.
    public var `where`: [String: JSONValue]?

    public init(
        userId: String? = nil, subscriptionId: String? = nil, eventSource: String? = nil,
        appNotificationId: String? = nil, groupName: String? = nil, priority: NotificationPriority? = nil,
        expirationDateTime: Date? = nil, displayTimeToLive: Int? = nil, targetPolicy: TargetPolicy? = nil,
        payload: NotificationPayload? = nil, push: PushOptions? = nil, recipients: [Recipient]? = nil, pushRecipientsOnly: Bool? = nil,
        where: [String: JSONValue]? = nil
    ) {
        self.where = `where`
        self.recipients = recipients
        self.pushRecipientsOnly = pushRecipientsOnly
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

/// One user of a publish to several (`recipients`), and its push options: each one given replaces the notification's.
public struct Recipient: Codable, Sendable, Equatable {
    public var userId: String?
    public var push: PushOptions?

    public init(userId: String?, push: PushOptions? = nil) {
        self.userId = userId
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

/// Per-notification push presentation options (Layer-style), one vocabulary for every provider. Where each goes on each
/// provider, and what a provider without such a thing drops, is the README's table ("Push options on each provider").
public struct PushOptions: Codable, Sendable, Equatable {
    public var sound: String?
    /// Plays `sound` as a critical alert (APNs; the app needs Apple's entitlement).
    public var criticalSound: Bool?
    public var category: String?
    public var threadId: String?
    /// The alert's title on this push, instead of `visualContent.title` (the stored notification keeps its own). A push
    /// with a title or body is an alert even when the notification has no visual content.
    public var title: String?
    /// A line under the title.
    public var subtitle: String?
    /// The alert's text on this push, instead of `visualContent.body` (the stored notification keeps its own).
    public var body: String?
    /// Localized title and body: a key of the app's strings, and the arguments of its format.
    public var titleLocKey: String?
    public var titleLocArgs: [String]?
    public var bodyLocKey: String?
    public var bodyLocArgs: [String]?
    /// An image shown with the alert (https URL).
    public var imageUrl: String?
    /// The image iOS shows while the app launches from the alert.
    public var launchImage: String?
    /// Lets the app's notification service extension change the alert before it is shown (APNs).
    public var mutableContent: Bool?
    public var interruptionLevel: InterruptionLevel?
    /// 0 to 1: how the system ranks the alert in a notification summary (APNs).
    public var relevanceScore: Double?
    /// The badge this push shows (0 to 99,999), in every badge mode but `none`, instead of the counted one.
    public var badge: Int?
    /// How the notification reaches devices: `alert` (the default), `silent` or `none`.
    public var delivery: PushDelivery?
    /// What a tap on the alert opens (a deep link): an absolute `https` URL or one of the app's own scheme, at most 2048
    /// bytes.
    public var url: String?
    /// The Android notification channel the alert is posted to (FCM's `android.notification.channel_id`).
    public var androidChannelId: String?
    /// App-defined keys and values, in a namespace of the app's own on each provider (the README's table).
    public var data: [String: JSONValue]?

    public init(
        sound: String? = nil, criticalSound: Bool? = nil, category: String? = nil, threadId: String? = nil, title: String? = nil,
        subtitle: String? = nil, body: String? = nil, titleLocKey: String? = nil, titleLocArgs: [String]? = nil,
        bodyLocKey: String? = nil, bodyLocArgs: [String]? = nil, imageUrl: String? = nil, launchImage: String? = nil,
        mutableContent: Bool? = nil, interruptionLevel: InterruptionLevel? = nil, relevanceScore: Double? = nil, badge: Int? = nil,
        delivery: PushDelivery? = nil, url: String? = nil, androidChannelId: String? = nil, data: [String: JSONValue]? = nil
    ) {
        self.url = url
        self.androidChannelId = androidChannelId
        self.delivery = delivery
        self.sound = sound
        self.criticalSound = criticalSound
        self.category = category
        self.threadId = threadId
        self.title = title
        self.subtitle = subtitle
        self.body = body
        self.titleLocKey = titleLocKey
        self.titleLocArgs = titleLocArgs
        self.bodyLocKey = bodyLocKey
        self.bodyLocArgs = bodyLocArgs
        self.imageUrl = imageUrl
        self.launchImage = launchImage
        self.mutableContent = mutableContent
        self.interruptionLevel = interruptionLevel
        self.relevanceScore = relevanceScore
        self.badge = badge
        self.data = data
    }
}

extension PushOptions {
    /// Whether this push names its own alert text (`title` or `body`), which it shows instead of the visual content's.
    @inlinable public var hasAlertText: Bool { title != nil || body != nil }

    /// `override`'s options over these: each option it gives replaces this one's (app data key by key).
    public func overridden(by override: PushOptions?) -> PushOptions {
        guard let override else { return self }
        var data = self.data
        if let extra = override.data { data = (data ?? [:]).merging(extra) { $1 } }
        return PushOptions(
            sound: override.sound ?? sound, criticalSound: override.criticalSound ?? criticalSound, category: override.category ?? category,
            threadId: override.threadId ?? threadId, title: override.title ?? title, subtitle: override.subtitle ?? subtitle,
            body: override.body ?? body, titleLocKey: override.titleLocKey ?? titleLocKey,
            titleLocArgs: override.titleLocArgs ?? titleLocArgs, bodyLocKey: override.bodyLocKey ?? bodyLocKey,
            bodyLocArgs: override.bodyLocArgs ?? bodyLocArgs, imageUrl: override.imageUrl ?? imageUrl, launchImage: override.launchImage ?? launchImage,
            mutableContent: override.mutableContent ?? mutableContent, interruptionLevel: override.interruptionLevel ?? interruptionLevel,
            relevanceScore: override.relevanceScore ?? relevanceScore, badge: override.badge ?? badge, delivery: override.delivery ?? delivery,
            url: override.url ?? url, androidChannelId: override.androidChannelId ?? androidChannelId, data: data)
    }
}

/// How a notification reaches a recipient's devices. Whatever it is, the notification is stored and synced.
public enum PushDelivery: String, Codable, Sendable, CaseIterable {
    /// An alert where the notification has visual content, else a background push (the default).
    case alert
    /// A background push only: the app syncs, nothing is shown.
    case silent
    /// No push at all (a later read, dismiss or delete still reaches the other devices).
    case none
}

/// How an alert may interrupt (APNs' interruption levels; mapped to each provider's nearest).
public enum InterruptionLevel: String, Codable, Sendable, CaseIterable {
    case passive, active, timeSensitive, critical
}
