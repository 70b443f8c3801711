import Foundation

/// What happened to a notification; one change has one per-user sequence number.
public enum ChangeKind: String, Codable, Sendable, CaseIterable {
    case created, updated, stateChanged, deleted, expired

    /// Created and updated carry new content and may alert; the rest are shoulder taps.
    public var isContentChange: Bool { self == .created || self == .updated }
}
