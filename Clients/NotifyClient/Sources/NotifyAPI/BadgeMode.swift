/// What the badge of an app's alert pushes counts (an app setting: `POST /v1/apps`, `PATCH /v1/apps/{appId}`).
public enum BadgeMode: String, Codable, Sendable, CaseIterable {
    /// The user's unread, active notifications sent to the user (broadcasts not counted). The default.
    case unread
    /// The user's unread notifications and the unread broadcasts in the user's feed.
    case unreadIncludingBroadcasts
}
