import Foundation

/// What happened to a notification; one change has one per-user sequence number. `removed`: a broadcast left the
/// user's feed because the user is no longer a member of its event source (it stays in the feeds of the members).
public enum ChangeKind: String, Codable, Sendable, CaseIterable {
    case created, updated, stateChanged, deleted, expired, removed

    /// Whether the notification leaves the user's devices: deleted, expired, or a broadcast removed from the feed.
    public var removesNotification: Bool { self == .deleted || self == .expired || self == .removed }

    /// Created and updated carry new content and may alert; the rest are shoulder taps.
    public var isContentChange: Bool { self == .created || self == .updated }
}
