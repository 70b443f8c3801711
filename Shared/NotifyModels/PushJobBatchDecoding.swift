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
    /// What a group's jobs share, read key by key: in a group, or in a job of the list form written before groups.
    private struct SharedFields {
        var appId: String?, platform: Platform?, notificationId: UUID?, sequence: Int64?, kind: ChangeKind?, isAlert: Bool?
        var priority: NotificationPriority?, expiration: Date?, collapseId: String?, payload: String?, attempt: Int?

        /// Reads the value if `key` is a shared field not seen yet; false leaves the value to the caller.
        mutating func read(_ key: JSONKey, from reader: inout JSONReader) throws -> Bool {
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
            default: return false
            }
            return true
        }

        /// The group of `targets`; throws naming the first shared field missing.
        func group(of targets: [PushJobBatch.Target], _ reader: JSONReader) throws -> PushJobBatch.Group {
            try PushJobBatch.Group(
                appId: reader.required(appId, "appId"), platform: reader.required(platform, "platform"),
                notificationId: reader.required(notificationId, "notificationId"), sequence: reader.required(sequence, "sequence"),
                kind: reader.required(kind, "kind"), isAlert: reader.required(isAlert, "isAlert"), priority: reader.required(priority, "priority"),
                expiration: reader.required(expiration, "expiration"), collapseId: reader.required(collapseId, "collapseId"),
                payload: reader.required(payload, "payload"), attempt: reader.required(attempt, "attempt"), targets: targets)
        }
    }

    /// A device's fields, read key by key like `SharedFields`.
    private struct TargetFields {
        var pushId: UUID?, subscriptionId: UUID?, deviceToken: String?, keys: WebPushKeys??

        mutating func read(_ key: JSONKey, from reader: inout JSONReader) throws -> Bool {
            switch key {
            case "pushId" where pushId == nil: pushId = try reader.readUUID()
            case "subscriptionId" where subscriptionId == nil: subscriptionId = try reader.readUUID()
            case "deviceToken" where deviceToken == nil: deviceToken = try reader.readString()
            case "keys" where keys == nil: keys = .some(try reader.readOptional { try WebPushKeys(reading: &$0) })
            default: return false
            }
            return true
        }

        func target(_ reader: JSONReader) throws -> PushJobBatch.Target {
            try PushJobBatch.Target(
                pushId: reader.required(pushId, "pushId"), subscriptionId: reader.required(subscriptionId, "subscriptionId"),
                deviceToken: reader.required(deviceToken, "deviceToken"), keys: keys ?? nil)
        }

        static func readTarget(_ reader: inout JSONReader) throws -> PushJobBatch.Target {
            var fields = TargetFields()
            try reader.readObject { reader, key in
                if try !fields.read(key, from: &reader) { try reader.skipValue() }
            }
            return try fields.target(reader)
        }
    }

    /// Reads one group and appends a job per target, all sharing the group's strings (the payload is one copy).
    static func readGroup(_ reader: inout JSONReader, into jobs: inout [PushJob]) throws {
        var shared = SharedFields()
        var targets: [PushJobBatch.Target]?
        try reader.readObject { reader, key in
            if try shared.read(key, from: &reader) { return }
            switch key {
            case "targets" where targets == nil: targets = try reader.readArray { try TargetFields.readTarget(&$0) }
            default: try reader.skipValue()
            }
        }
        jobs.append(contentsOf: try shared.group(of: reader.required(targets, "targets"), reader).jobs)
    }

    /// Reads a job of the list form written before groups existed: a group of one, its fields in one object.
    init(reading reader: inout JSONReader) throws {
        var shared = SharedFields()
        var device = TargetFields()
        try reader.readObject { reader, key in
            if try !shared.read(key, from: &reader), try !device.read(key, from: &reader) { try reader.skipValue() }
        }
        self = try shared.group(of: [device.target(reader)], reader).jobs[0]
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
