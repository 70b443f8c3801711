import Foundation
import NotifyModels

/// Reads a user's notifications as their devices see them: one by id, the changes after a cursor, and history pages.
/// `PostgresNotificationStore` reads the shared tables; NotifyStoreTesting holds one in memory for in-process tests.
public protocol NotificationStore: Sendable {
    /// A notification of the app by id: one sent to a user, or a broadcast. Given `userId`, a broadcast is found only in
    /// that user's feed, with the user's state of it; without, it is the broadcast as published (`userId` empty).
    func notification(appId: String, id: UUID, userId: String?) async throws -> NotificationView?

    /// Changes after `position`, oldest first, at most `limit`; deletions, expirations and removals pass any filter. Throws
    /// `NotifyStoreError.cursorExpired` when changes after the position were purged.
    func changes(appId: String, userId: String, after position: SyncPosition, limit: Int, filter: NotificationFilter) async throws -> ChangePage

    /// Throws `NotifyStoreError.cursorExpired` when changes after `sequence` were purged (0 means "from scratch").
    func ensureRetained(appId: String, userId: String, after sequence: Int64) async throws

    /// Notifications of one status (active by default), newest first, `limit` at a time after `pageToken`'s page.
    /// Throws `NotifyStoreError.invalidPageToken` for a token this store did not give out.
    func history(appId: String, userId: String, filter: NotificationFilter, limit: Int, pageToken: String?) async throws -> HistoryPage

    /// The sequence of the last change to the notification `id` as `userId` has it (a broadcast's: that user's state
    /// of it) when it is later than `sequence`; nil until then. Read to learn that a state change was applied.
    func changeSequence(appId: String, userId: String, notificationId id: UUID, broadcast: Bool, after sequence: Int64) async throws -> Int64?
}

/// Reader options, as the Rome SDK's reader offers them, and Graph's group.
public struct NotificationFilter: Sendable, Equatable {
    public var status: NotificationStatus?
    public var readState: ReadState?
    public var userActionState: UserActionState?
    public var groupName: String?

    public init(status: NotificationStatus? = nil, readState: ReadState? = nil, userActionState: UserActionState? = nil, groupName: String? = nil) {
        self.status = status
        self.readState = readState
        self.userActionState = userActionState
        self.groupName = groupName
    }

    public func matches(_ view: NotificationView) -> Bool {
        (status == nil || view.status == status) && (readState == nil || view.readState == readState)
            && (userActionState == nil || view.userActionState == userActionState) && (groupName == nil || view.groupName == groupName)
    }

    /// Whether `change` belongs in a page read with this filter: deletions, expirations and removals always do, since
    /// the device must remove what it holds.
    public func admits(_ change: NotificationChange) -> Bool {
        change.kind.removesNotification || matches(change.notification)
    }
}

/// A page of history and the token of the next page.
public struct HistoryPage: Codable, Sendable, Equatable {
    public var notifications: [NotificationView]
    public var nextPageToken: String?

    public init(notifications: [NotificationView], nextPageToken: String?) {
        self.notifications = notifications
        self.nextPageToken = nextPageToken
    }
}
