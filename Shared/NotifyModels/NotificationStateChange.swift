import Foundation

/// A state change or deletion of one notification, as a storage command carries it.
public struct NotificationStateChange: Codable, Sendable, Equatable {
    public var appId: String
    public var userId: String
    public var notificationId: UUID
    public var readState: ReadState?
    public var userActionState: UserActionState?
    /// Deletes the notification (a tombstone stays for devices to sync).
    public var delete: Bool
    /// The device that acted (`X-Subscription-Id`); it is not pushed its own change.
    public var originSubscriptionId: UUID?
    public var requestedAt: Date

    public init(
        appId: String, userId: String, notificationId: UUID, readState: ReadState?, userActionState: UserActionState?,
        delete: Bool, originSubscriptionId: UUID?, requestedAt: Date
    ) {
        self.appId = appId
        self.userId = userId
        self.notificationId = notificationId
        self.readState = readState
        self.userActionState = userActionState
        self.delete = delete
        self.originSubscriptionId = originSubscriptionId
        self.requestedAt = requestedAt
    }
}
