import Foundation

/// `PATCH /v1/me/notifications/{id}` (or the app server's PATCH): the states to set.
public struct StateChangeRequest: Codable, Sendable, Equatable {
    public var readState: ReadState?
    public var userActionState: UserActionState?

    public init(readState: ReadState? = nil, userActionState: UserActionState? = nil) {
        self.readState = readState
        self.userActionState = userActionState
    }

    public func validate() throws(ValidationError) {
        if readState == nil && userActionState == nil {
            throw ValidationError(code: "missing_field", message: "set readState and/or userActionState", field: "readState")
        }
    }
}

/// A notification as devices and app servers read it (history, sync).
public struct NotificationView: Codable, Sendable, Equatable {
    @LowercasedUUID public var id: UUID
    public var userId: String
    public var appNotificationId: String?
    public var groupName: String?
    public var priority: NotificationPriority
    public var expirationDateTime: Date
    public var displayTimeToLive: Int?
    public var payload: NotificationPayload?
    public var push: PushOptions?
    public var readState: ReadState
    public var userActionState: UserActionState
    public var status: NotificationStatus
    /// The sequence of the notification's latest change.
    public var sequence: Int64
    public var createdDateTime: Date
    public var lastModifiedDateTime: Date
    /// The event source of a broadcast in the user's feed; absent for a notification sent to the user.
    public var eventSource: String?

    public init(
        id: UUID, userId: String, content: NotificationContent?, readState: ReadState, userActionState: UserActionState,
        status: NotificationStatus, sequence: Int64, createdDateTime: Date, lastModifiedDateTime: Date, eventSource: String? = nil
    ) {
        self.id = id
        self.eventSource = eventSource
        self.userId = userId
        self.appNotificationId = content?.appNotificationId
        self.groupName = content?.groupName
        self.priority = content?.priority ?? .none
        self.expirationDateTime = content?.expirationDateTime ?? lastModifiedDateTime
        self.displayTimeToLive = content?.displayTimeToLive
        // A tombstone keeps no content.
        self.payload = status == .deleted ? nil : content?.payload
        self.push = status == .deleted ? nil : content?.push
        self.readState = readState
        self.userActionState = userActionState
        self.status = status
        self.sequence = sequence
        self.createdDateTime = createdDateTime
        self.lastModifiedDateTime = lastModifiedDateTime
    }
}

/// One entry of `GET /v1/me/notifications/changes`: a change and the notification as it is now.
public struct NotificationChange: Codable, Sendable, Equatable {
    /// The user's sequence of this change. For a broadcast listed from the app's broadcasts (`broadcastSequence` set),
    /// the user's position the page had reached, not a change of its own.
    public var sequence: Int64
    /// Set on a broadcast in the user's feed listed as published or replaced: its place in the app's broadcasts.
    public var broadcastSequence: Int64?
    public var kind: ChangeKind
    public var changedDateTime: Date
    public var notification: NotificationView

    public init(sequence: Int64, broadcastSequence: Int64? = nil, kind: ChangeKind, changedDateTime: Date, notification: NotificationView) {
        self.sequence = sequence
        self.broadcastSequence = broadcastSequence
        self.kind = kind
        self.changedDateTime = changedDateTime
        self.notification = notification
    }
}

/// A page of changes and the cursor to ask with next.
public struct ChangePage: Codable, Sendable, Equatable {
    public var changes: [NotificationChange]
    public var cursor: String
    /// More changes wait past this page: ask again at once with `cursor`.
    public var hasMore: Bool

    public init(changes: [NotificationChange], cursor: String, hasMore: Bool) {
        self.changes = changes
        self.cursor = cursor
        self.hasMore = hasMore
    }
}

/// Where a device's sync has reached: the user's last sequence it has seen, and the last of the app's broadcasts.
public struct SyncPosition: Sendable, Equatable {
    public var sequence: Int64
    public var broadcastSequence: Int64

    public init(sequence: Int64 = 0, broadcastSequence: Int64 = 0) {
        self.sequence = sequence
        self.broadcastSequence = broadcastSequence
    }
}

/// The opaque sync cursor: a `SyncPosition`. Cursors of the first version (the user's sequence alone) are still read,
/// as a position before every broadcast.
public enum SyncCursor {
    public static func encode(_ position: SyncPosition) -> String {
        Data("v2.\(position.sequence).\(position.broadcastSequence)".utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
    }

    /// The position in a cursor; an absent cursor is the start (everything).
    public static func decode(_ cursor: String?) throws(ValidationError) -> SyncPosition {
        guard let cursor, !cursor.isEmpty else { return SyncPosition() }
        var text = cursor
        while text.count % 4 != 0 { text += "=" }
        let invalid = ValidationError.invalid("cursor", "the cursor is not one this service gave out")
        guard let data = Data(base64Encoded: text), let plain = String(data: data, encoding: .utf8) else { throw invalid }
        let fields = plain.split(separator: ".", omittingEmptySubsequences: false)
        let numbers = fields.dropFirst().compactMap { Int64($0) }.filter { $0 >= 0 }
        switch (fields.first, numbers.count, fields.count) {
        case ("v1", 1, 2): return SyncPosition(sequence: numbers[0])
        case ("v2", 2, 3): return SyncPosition(sequence: numbers[0], broadcastSequence: numbers[1])
        default: throw invalid
        }
    }
}

extension NotificationView {
    /// When the notification stops being worth showing (`displayTimeToLive` after it was created); nil: while it is active.
    public var displayExpiresAt: Date? {
        displayTimeToLive.map { createdDateTime.addingTimeInterval(TimeInterval($0)) }
    }
}
