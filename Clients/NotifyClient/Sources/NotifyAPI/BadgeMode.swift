/// What the badge of an app's pushes shows (an app setting: `POST /v1/apps`, `PATCH /v1/apps/{appId}`). Every mode but
/// `none` puts the badge on every push, a broadcast's included; the `…IncludingBroadcasts` modes add the unread
/// broadcasts in the user's feed to their count.
public enum BadgeMode: String, Codable, Sendable, CaseIterable {
    /// The user's unread, active notifications sent to the user (broadcasts not counted). The default.
    case unread
    /// The user's unread notifications and the unread broadcasts in the user's feed.
    case unreadIncludingBroadcasts
    /// The user's unread conversations: the distinct `groupName`s of the unread, active notifications sent to the user,
    /// each notification without a group counting as one.
    case unreadGroups
    /// The unread conversations and the unread broadcasts in the user's feed (each broadcast counting as one).
    case unreadGroupsIncludingBroadcasts
    /// The app server's number: `push.badge` on a push, else the user's number
    /// (`PUT /v1/apps/{appId}/users/{userId}/badge`, 0 until set).
    case external
    /// The app server's number and the unread broadcasts in the user's feed.
    case externalIncludingBroadcasts
    /// No badge on any push.
    case none

    /// The count adds the unread broadcasts in the user's feed.
    public var countsBroadcasts: Bool {
        self == .unreadIncludingBroadcasts || self == .unreadGroupsIncludingBroadcasts || self == .externalIncludingBroadcasts
    }

    /// The count is of conversations (`groupName`s) rather than notifications.
    public var countsGroups: Bool { self == .unreadGroups || self == .unreadGroupsIncludingBroadcasts }

    /// The badge is the app server's number (`PUT …/users/{userId}/badge`).
    public var isExternal: Bool { self == .external || self == .externalIncludingBroadcasts }
}
