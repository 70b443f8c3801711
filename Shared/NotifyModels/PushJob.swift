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
    /// When the change was made (a publish: when ingest accepted it), for the delivery latency push-dispatch measures;
    /// nil in messages from before it was carried.
    public var changedAt: Date?
    /// The notification's `groupName`, for providers that group what they show by it (WNS's toast group).
    public var displayGroup: String?
    /// The app identity the device registered with (`appPackage`): its credentials are used if the app has some.
    public var appPackage: String?
    /// The visual alert that follows a shoulder tap (raw and visual content, to iOS): sent only if the device has not
    /// synced the notification by the time it is due.
    public var isVisualFallback: Bool = false

    public init(
        pushId: UUID, appId: String, subscriptionId: UUID, platform: Platform, deviceToken: String,
        notificationId: UUID, sequence: Int64, kind: ChangeKind, isAlert: Bool, priority: NotificationPriority,
        expiration: Date, collapseId: String, payload: String, attempt: Int = 0, keys: WebPushKeys? = nil, changedAt: Date? = nil,
        displayGroup: String? = nil, appPackage: String? = nil
    ) {
        self.appPackage = appPackage
        self.keys = keys
        self.changedAt = changedAt
        self.displayGroup = displayGroup
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
///
/// On the wire the jobs travel in groups: the jobs of one change to one platform share everything but the device,
/// so a group holds the shared fields and payload once and a target per device (`{"groups":[{..., "targets":[...]}]}`).
/// Messages written before groups existed (`{"jobs":[...]}`) are still read, so an upgrade strands none.
public struct PushJobBatch: Sendable {
    public var jobs: [PushJob]
    public init(jobs: [PushJob]) { self.jobs = jobs }

    /// The ranges of `jobs` that go out as one group: consecutive jobs that share everything but the device.
    public var groupRanges: [Range<Int>] {
        var ranges: [Range<Int>] = []
        var start = jobs.startIndex
        while start < jobs.endIndex {
            var end = start + 1
            while end < jobs.endIndex && jobs[end].sharesGroup(with: jobs[start]) { end += 1 }
            ranges.append(start..<end)
            start = end
        }
        return ranges
    }
}

extension PushJob {
    /// Whether the two jobs differ only in their device (push id, subscription, token, keys).
    func sharesGroup(with other: PushJob) -> Bool {
        notificationId == other.notificationId && sequence == other.sequence && attempt == other.attempt
            && platform == other.platform && kind == other.kind && isAlert == other.isAlert && priority == other.priority
            && expiration == other.expiration && appId == other.appId && collapseId == other.collapseId && payload == other.payload
            && changedAt == other.changedAt && displayGroup == other.displayGroup && isVisualFallback == other.isVisualFallback
    }
}

extension PushJobBatch {
    /// A group on the wire: the fields its jobs share, and a target per device. Both readers (Codable and the
    /// hand-written one) expand it through `jobs`.
    struct Group: Codable {
        var appId: String
        var platform: Platform
        var notificationId: UUID
        var sequence: Int64
        var kind: ChangeKind
        var isAlert: Bool
        var priority: NotificationPriority
        var expiration: Date
        var collapseId: String
        var payload: String
        var attempt: Int
        var changedAt: Date?
        var displayGroup: String?
        var isVisualFallback: Bool?
        var targets: [Target]

        /// A job per target, all sharing the group's strings (the payload is one copy).
        var jobs: [PushJob] {
            targets.map { target in
                var job = PushJob(
                    pushId: target.pushId, appId: appId, subscriptionId: target.subscriptionId, platform: platform,
                    deviceToken: target.deviceToken, notificationId: notificationId, sequence: sequence, kind: kind, isAlert: isAlert,
                    priority: priority, expiration: expiration, collapseId: collapseId, payload: payload, attempt: attempt, keys: target.keys,
                    changedAt: changedAt, displayGroup: displayGroup, appPackage: target.appPackage)
                job.isVisualFallback = isVisualFallback ?? false
                return job
            }
        }
    }

    /// One device of a group: what its job does not share with the others.
    struct Target: Codable {
        var pushId: UUID
        var subscriptionId: UUID
        var deviceToken: String
        var keys: WebPushKeys?
        var appPackage: String?
    }
}

extension PushJobBatch.Group {
    /// The group of jobs that `groupRanges` put together (the first one's shared fields).
    init(_ jobs: ArraySlice<PushJob>) {
        let first = jobs[jobs.startIndex]
        self.init(
            appId: first.appId, platform: first.platform, notificationId: first.notificationId, sequence: first.sequence,
            kind: first.kind, isAlert: first.isAlert, priority: first.priority, expiration: first.expiration,
            collapseId: first.collapseId, payload: first.payload, attempt: first.attempt, changedAt: first.changedAt,
            displayGroup: first.displayGroup, isVisualFallback: first.isVisualFallback ? true : nil, targets: jobs.map { PushJobBatch.Target(
                pushId: $0.pushId, subscriptionId: $0.subscriptionId, deviceToken: $0.deviceToken, keys: $0.keys, appPackage: $0.appPackage) })
    }
}

extension PushJobBatch: Codable {
    private enum CodingKeys: String, CodingKey {
        case groups
        /// The form written before groups existed.
        case jobs
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let groups = try container.decodeIfPresent([Group].self, forKey: .groups)
        let jobs = try container.decodeIfPresent([PushJob].self, forKey: .jobs)
        guard groups != nil || jobs != nil else {
            throw DecodingError.keyNotFound(CodingKeys.groups, .init(codingPath: decoder.codingPath, debugDescription: "neither groups nor jobs"))
        }
        self.init(jobs: (groups ?? []).flatMap(\.jobs) + (jobs ?? []))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(groupRanges.map { Group(jobs[$0]) }, forKey: .groups)
    }
}
