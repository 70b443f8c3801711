import Foundation

/// One push to one device, built by fanout and sent by push-dispatch.
public struct PushJob: Codable, Sendable, Equatable {
    /// Deterministic per (notification, sequence, device): a repeated push replaces, never stacks.
    public var pushId: UUID
    public var appId: String
    public var subscriptionId: UUID
    public var platform: Platform
    public var deviceToken: String
    public var notificationId: UUID
    public var sequence: Int64
    public var kind: ChangeKind
    /// An alert the user sees, or a background shoulder tap.
    public var isAlert: Bool
    public var priority: NotificationPriority
    public var expiration: Date
    /// Same for every push of one notification, so a newer one replaces an older one.
    public var collapseId: String
    /// The provider-specific body, already serialised.
    public var payload: String
    /// How many times dispatch has tried this job before.
    public var attempt: Int
    /// Web Push only: the keys the payload is encrypted for.
    public var keys: WebPushKeys?

    public init(
        pushId: UUID, appId: String, subscriptionId: UUID, platform: Platform, deviceToken: String,
        notificationId: UUID, sequence: Int64, kind: ChangeKind, isAlert: Bool, priority: NotificationPriority,
        expiration: Date, collapseId: String, payload: String, attempt: Int = 0, keys: WebPushKeys? = nil
    ) {
        self.keys = keys
        self.pushId = pushId
        self.appId = appId
        self.subscriptionId = subscriptionId
        self.platform = platform
        self.deviceToken = deviceToken
        self.notificationId = notificationId
        self.sequence = sequence
        self.kind = kind
        self.isAlert = isAlert
        self.priority = priority
        self.expiration = expiration
        self.collapseId = collapseId
        self.payload = payload
        self.attempt = attempt
    }
}

/// One AMQP message on a provider's push queue: many jobs, one confirm.
public struct PushJobBatch: Codable, Sendable {
    public var jobs: [PushJob]
    public init(jobs: [PushJob]) { self.jobs = jobs }
}
