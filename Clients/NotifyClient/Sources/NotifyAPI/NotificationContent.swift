import Foundation

/// A validated notification, as stored and as carried on change events.
public struct NotificationContent: Codable, Sendable, Equatable {
    public var appNotificationId: String?
    public var groupName: String?
    public var priority: NotificationPriority
    public var expirationDateTime: Date
    public var displayTimeToLive: Int?
    public var platformTypes: [Platform]?
    public var payload: NotificationPayload
    public var push: PushOptions?

    public init(
        appNotificationId: String?, groupName: String?, priority: NotificationPriority,
        expirationDateTime: Date, displayTimeToLive: Int?, platformTypes: [Platform]?,
        payload: NotificationPayload, push: PushOptions?
    ) {
        self.appNotificationId = appNotificationId
        self.groupName = groupName
        self.priority = priority
        self.expirationDateTime = expirationDateTime
        self.displayTimeToLive = displayTimeToLive
        self.platformTypes = platformTypes
        self.payload = payload
        self.push = push
    }

    /// A visual notification is pushed as an alert; a raw one as a background shoulder tap. The push options' own
    /// `title` or `body` make an alert of a raw notification too (Layer pushes a recipient's own text so).
    @inlinable public var isVisual: Bool { payload.visualContent != nil || push?.hasAlertText == true }

    /// What a push's alert shows: the push options' `title` and `body`, each over the visual content's (the stored
    /// notification and the feed keep the visual content); nil when there is nothing to show.
    @inlinable public var alertText: VisualContent? {
        guard let push, push.hasAlertText else { return payload.visualContent }
        return VisualContent(title: push.title ?? payload.visualContent?.title, body: push.body ?? payload.visualContent?.body)
    }

    /// How it reaches devices (`push.delivery`, by default `alert`).
    @inlinable public var delivery: PushDelivery { push?.delivery ?? .alert }

    /// Pushed as an alert: it has visual content and is not to be delivered silently (or not at all).
    @inlinable public var isAlert: Bool { isVisual && delivery == .alert }
}
