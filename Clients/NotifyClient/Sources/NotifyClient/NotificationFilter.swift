import Foundation
import NotifyAPI

/// Reader options for `readBatch`, as the Rome SDK's reader offers them. A nil `readState` or
/// `userActionState` matches any; a nil `status` means `.active`. The cache holds active notifications
/// only; one whose expiration time has passed counts as `.expired` until the service's expiry change removes it.
public struct NotificationFilter: Sendable, Equatable {
    public var status: NotificationStatus?
    public var readState: ReadState?
    public var userActionState: UserActionState?

    public init(status: NotificationStatus? = nil, readState: ReadState? = nil, userActionState: UserActionState? = nil) {
        self.status = status
        self.readState = readState
        self.userActionState = userActionState
    }

    func matches(_ view: NotificationView, now: Date) -> Bool {
        let effectiveStatus = view.status == .active && view.expirationDateTime <= now ? .expired : view.status
        return (status ?? .active) == effectiveStatus && (readState == nil || view.readState == readState)
            && (userActionState == nil || view.userActionState == userActionState)
    }
}
