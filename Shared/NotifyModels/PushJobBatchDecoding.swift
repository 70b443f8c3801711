import Foundation

// Push jobs read without JSONDecoder: push-dispatch reads every job it sends through here. Each decoder reads
// exactly what `WireCoding.makeDecoder()` reads into the same type (see ChangeEventBatchDecoding.swift for
// the conventions: `T?` locals for required keys, `T??` for optional ones, the first of a repeated key counts).

extension PushJobBatch {
    /// Reads a push queue's message, in groups or (written before groups existed) as a list of jobs.
    /// Throws `JSONReadError`.
    public init(decodingJSON document: some ContiguousBytes) throws {
        self = try JSONReader.read(document) { try PushJobBatch(reading: &$0) }
    }

    init(reading reader: inout JSONReader) throws {
        var grouped: [PushJob]??, listed: [PushJob]??
        try reader.readObject { reader, key in
            switch key {
            case "groups" where grouped == nil:
                grouped = .some(try reader.readOptional { reader in
                    var jobs: [PushJob] = []
                    try reader.readElements { try PushJob.readGroup(&$0, into: &jobs) }
                    return jobs
                })
            case "jobs" where listed == nil: listed = .some(try reader.readOptional { try $0.readArray { try PushJob(reading: &$0) } })
            default: try reader.skipValue()
            }
        }
        let groupedJobs = grouped ?? nil, listedJobs = listed ?? nil
        if groupedJobs == nil && listedJobs == nil { _ = try reader.required(groupedJobs, "groups") }
        self.init(jobs: (groupedJobs ?? []) + (listedJobs ?? []))
    }
}

extension PushJob {
    /// One device of a group: what its job does not share with the others.
    private struct Target {
        var pushId: UUID
        var subscriptionId: UUID
        var deviceToken: String
        var keys: WebPushKeys?

        init(reading reader: inout JSONReader) throws {
            var pushId: UUID?, subscriptionId: UUID?, deviceToken: String?, keys: WebPushKeys??
            try reader.readObject { reader, key in
                switch key {
                case "pushId" where pushId == nil: pushId = try reader.readUUID()
                case "subscriptionId" where subscriptionId == nil: subscriptionId = try reader.readUUID()
                case "deviceToken" where deviceToken == nil: deviceToken = try reader.readString()
                case "keys" where keys == nil: keys = .some(try reader.readOptional { try WebPushKeys(reading: &$0) })
                default: try reader.skipValue()
                }
            }
            self.pushId = try reader.required(pushId, "pushId")
            self.subscriptionId = try reader.required(subscriptionId, "subscriptionId")
            self.deviceToken = try reader.required(deviceToken, "deviceToken")
            self.keys = keys ?? nil
        }
    }

    /// Reads one group and appends a job per target, all sharing the group's strings (the payload is one copy).
    static func readGroup(_ reader: inout JSONReader, into jobs: inout [PushJob]) throws {
        var appId: String?, platform: Platform?, notificationId: UUID?, sequence: Int64?, kind: ChangeKind?, isAlert: Bool?
        var priority: NotificationPriority?, expiration: Date?, collapseId: String?, payload: String?, attempt: Int?, targets: [Target]?
        try reader.readObject { reader, key in
            switch key {
            case "appId" where appId == nil: appId = try reader.readString()
            case "platform" where platform == nil: platform = try reader.readEnum(Platform.self)
            case "notificationId" where notificationId == nil: notificationId = try reader.readUUID()
            case "sequence" where sequence == nil: sequence = try reader.readInt64()
            case "kind" where kind == nil: kind = try reader.readEnum(ChangeKind.self)
            case "isAlert" where isAlert == nil: isAlert = try reader.readBool()
            case "priority" where priority == nil: priority = try reader.readEnum(NotificationPriority.self)
            case "expiration" where expiration == nil: expiration = try reader.readTimestamp()
            case "collapseId" where collapseId == nil: collapseId = try reader.readString()
            case "payload" where payload == nil: payload = try reader.readString()
            case "attempt" where attempt == nil: attempt = try reader.readInt()
            case "targets" where targets == nil: targets = try reader.readArray { try Target(reading: &$0) }
            default: try reader.skipValue()
            }
        }
        let group = try (
            appId: reader.required(appId, "appId"), platform: reader.required(platform, "platform"),
            notificationId: reader.required(notificationId, "notificationId"), sequence: reader.required(sequence, "sequence"),
            kind: reader.required(kind, "kind"), isAlert: reader.required(isAlert, "isAlert"), priority: reader.required(priority, "priority"),
            expiration: reader.required(expiration, "expiration"), collapseId: reader.required(collapseId, "collapseId"),
            payload: reader.required(payload, "payload"), attempt: reader.required(attempt, "attempt"))
        for target in try reader.required(targets, "targets") {
            jobs.append(PushJob(
                pushId: target.pushId, appId: group.appId, subscriptionId: target.subscriptionId, platform: group.platform,
                deviceToken: target.deviceToken, notificationId: group.notificationId, sequence: group.sequence, kind: group.kind,
                isAlert: group.isAlert, priority: group.priority, expiration: group.expiration, collapseId: group.collapseId,
                payload: group.payload, attempt: group.attempt, keys: target.keys))
        }
    }

    /// Reads a job of the list form written before groups existed.
    init(reading reader: inout JSONReader) throws {
        var pushId: UUID?, appId: String?, subscriptionId: UUID?, platform: Platform?, deviceToken: String?
        var notificationId: UUID?, sequence: Int64?, kind: ChangeKind?, isAlert: Bool?, priority: NotificationPriority?
        var expiration: Date?, collapseId: String?, payload: String?, attempt: Int?, keys: WebPushKeys??
        try reader.readObject { reader, key in
            switch key {
            case "pushId" where pushId == nil: pushId = try reader.readUUID()
            case "appId" where appId == nil: appId = try reader.readString()
            case "subscriptionId" where subscriptionId == nil: subscriptionId = try reader.readUUID()
            case "platform" where platform == nil: platform = try reader.readEnum(Platform.self)
            case "deviceToken" where deviceToken == nil: deviceToken = try reader.readString()
            case "notificationId" where notificationId == nil: notificationId = try reader.readUUID()
            case "sequence" where sequence == nil: sequence = try reader.readInt64()
            case "kind" where kind == nil: kind = try reader.readEnum(ChangeKind.self)
            case "isAlert" where isAlert == nil: isAlert = try reader.readBool()
            case "priority" where priority == nil: priority = try reader.readEnum(NotificationPriority.self)
            case "expiration" where expiration == nil: expiration = try reader.readTimestamp()
            case "collapseId" where collapseId == nil: collapseId = try reader.readString()
            case "payload" where payload == nil: payload = try reader.readString()
            case "attempt" where attempt == nil: attempt = try reader.readInt()
            case "keys" where keys == nil: keys = .some(try reader.readOptional { try WebPushKeys(reading: &$0) })
            default: try reader.skipValue()
            }
        }
        try self.init(
            pushId: reader.required(pushId, "pushId"), appId: reader.required(appId, "appId"),
            subscriptionId: reader.required(subscriptionId, "subscriptionId"), platform: reader.required(platform, "platform"),
            deviceToken: reader.required(deviceToken, "deviceToken"), notificationId: reader.required(notificationId, "notificationId"),
            sequence: reader.required(sequence, "sequence"), kind: reader.required(kind, "kind"), isAlert: reader.required(isAlert, "isAlert"),
            priority: reader.required(priority, "priority"), expiration: reader.required(expiration, "expiration"),
            collapseId: reader.required(collapseId, "collapseId"), payload: reader.required(payload, "payload"),
            attempt: reader.required(attempt, "attempt"), keys: keys ?? nil)
    }
}

extension WebPushKeys {
    /// Reads the keys as stored with a subscription. Throws `JSONReadError`.
    public init(decodingJSON document: some ContiguousBytes) throws {
        self = try JSONReader.read(document) { try WebPushKeys(reading: &$0) }
    }

    init(reading reader: inout JSONReader) throws {
        var p256dh: String?, auth: String?
        try reader.readObject { reader, key in
            switch key {
            case "p256dh" where p256dh == nil: p256dh = try reader.readString()
            case "auth" where auth == nil: auth = try reader.readString()
            default: try reader.skipValue()
            }
        }
        try self.init(p256dh: reader.required(p256dh, "p256dh"), auth: reader.required(auth, "auth"))
    }
}
