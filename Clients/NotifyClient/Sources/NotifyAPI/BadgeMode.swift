/// What the badge of an app's pushes shows (an app setting: `POST /v1/apps`, `PATCH /v1/apps/{appId}`).
public enum BadgeMode: String, Codable, Sendable, CaseIterable {
    /// The user's unread, active notifications sent to the user (broadcasts not counted). The default.
    case unread
    /// The user's unread notifications and the unread broadcasts in the user's feed.
    case unreadIncludingBroadcasts
    /// The app server's number: `push.badge` on a push, else the user's number
    /// (`PUT /v1/apps/{appId}/users/{userId}/badge`, 0 until set).
    case external
    /// No badge on any push.
    case none
}
