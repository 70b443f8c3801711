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

    public init(
        id: UUID, userId: String, content: NotificationContent?, readState: ReadState, userActionState: UserActionState,
        status: NotificationStatus, sequence: Int64, createdDateTime: Date, lastModifiedDateTime: Date
    ) {
        self.id = id
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
    public var sequence: Int64
    public var kind: ChangeKind
    public var changedDateTime: Date
    public var notification: NotificationView

    public init(sequence: Int64, kind: ChangeKind, changedDateTime: Date, notification: NotificationView) {
        self.sequence = sequence
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

/// The opaque sync cursor: the last sequence a device has seen.
public enum SyncCursor {
    public static func encode(_ sequence: Int64) -> String {
        Data("v1.\(sequence)".utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
    }

    /// The sequence in a cursor; an absent cursor is 0 (everything).
    public static func decode(_ cursor: String?) throws(ValidationError) -> Int64 {
        guard let cursor, !cursor.isEmpty else { return 0 }
        var text = cursor
        while text.count % 4 != 0 { text += "=" }
        guard let data = Data(base64Encoded: text), let plain = String(data: data, encoding: .utf8),
              plain.hasPrefix("v1."), let sequence = Int64(plain.dropFirst(3)), sequence >= 0
        else { throw .invalid("cursor", "the cursor is not one this service gave out") }
        return sequence
    }
}
