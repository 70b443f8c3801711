import Foundation

/// Emitted by storage on `fanout.changes` after the change committed.
public struct ChangeEvent: Codable, Sendable, Equatable {
    public var appId: String
    public var userId: String
    public var sequence: Int64
    public var kind: ChangeKind
    public var notificationId: UUID
    /// Present for created and updated changes.
    public var content: NotificationContent?
    public var readState: ReadState
    public var userActionState: UserActionState
    /// The device that caused the change; it is not pushed its own change.
    public var originSubscriptionId: UUID?
    /// The badge the user's pushes show once this change committed, as the app's badge mode counts it (the unread
    /// count by default); nil: the app's pushes carry no badge.
    public var badge: Int?
    public var changedAt: Date
    /// Set for a broadcast: every device subscribed to this event source is a target (and `userId` is empty).
    public var eventSource: String?
    /// The version of the user's set of devices once this change committed (`device_versions`): fanout may push
    /// to the devices it read at this version or a later one without reading them again. Nil: read them.
    public var devicesVersion: Int64?
    /// Set when the publish named devices: only these of the user's devices are pushed this change.
    public var pushSubscriptionIds: [UUID]?
    /// A broadcast's members with push options of their own: user id → options (the others get `content.push`).
    public var recipientPush: [String: PushOptions]?
    /// A broadcast's `where`: only members whose parameters hold every pair are its audience.
    public var memberFilter: [String: JSONValue]?

    public init(
        appId: String, userId: String, sequence: Int64, kind: ChangeKind, notificationId: UUID,
        content: NotificationContent?, readState: ReadState, userActionState: UserActionState,
        originSubscriptionId: UUID?, badge: Int?, changedAt: Date, eventSource: String? = nil, devicesVersion: Int64? = nil,
        pushSubscriptionIds: [UUID]? = nil, recipientPush: [String: PushOptions]? = nil, memberFilter: [String: JSONValue]? = nil
    ) {
        self.memberFilter = memberFilter
        self.recipientPush = recipientPush
        self.pushSubscriptionIds = pushSubscriptionIds
        self.eventSource = eventSource
        self.devicesVersion = devicesVersion
        self.appId = appId
        self.userId = userId
        self.sequence = sequence
        self.kind = kind
        self.notificationId = notificationId
        self.content = content
        self.readState = readState
        self.userActionState = userActionState
        self.originSubscriptionId = originSubscriptionId
        self.badge = badge
        self.changedAt = changedAt
    }
}

/// One AMQP message on `fanout.changes`: the events of one storage batch.
public struct ChangeEventBatch: Codable, Sendable {
    public var events: [ChangeEvent]
    public init(events: [ChangeEvent]) { self.events = events }
}
