import Foundation
import NotifyModels

extension PushJobBatch: WireMessage {
    /// The jobs in groups (`groupRanges`): the fields a group's jobs share and their payload once, a target per device.
    public func wireBytes() -> Data {
        var batch = WirePushJobBatch()
        batch.schemaVersion = WireFormat.schemaVersion
        batch.groups = groupRanges.map { range in
            let first = jobs[range.lowerBound]
            var group = WirePushJobGroup()
            group.appID = first.appId
            group.platform = first.platform.wire
            (group.notificationIDHigh, group.notificationIDLow) = first.notificationId.wireHalves
            group.sequence = first.sequence
            group.kind = first.kind.wire
            group.isAlert = first.isAlert
            group.priority = first.priority.wire
            group.expirationMicros = first.expiration.wireMicros
            group.collapseID = first.collapseId
            group.payload = first.payload
            group.attempt = Int32(clamping: first.attempt)
            if let changedAt = first.changedAt { group.changedAtMicros = changedAt.wireMicros }
            if let displayGroup = first.displayGroup { group.displayGroup = displayGroup }
            group.visualFallback = first.isVisualFallback
            group.targets = jobs[range].map { job in
                var target = WirePushTarget()
                (target.pushIDHigh, target.pushIDLow) = job.pushId.wireHalves
                (target.subscriptionIDHigh, target.subscriptionIDLow) = job.subscriptionId.wireHalves
                target.deviceToken = job.deviceToken
                if let keys = job.keys { target.keys = keys.wire }
                if let appPackage = job.appPackage { target.appPackage = appPackage }
                return target
            }
            return group
        }
        return serialized(batch)
    }

    public init(wireBytes: Data) throws(WireDecodingError) {
        let batch = try readVersioned(WirePushJobBatch.self, from: wireBytes, name: "PushJobBatch") { $0.schemaVersion }
        var jobs: [PushJob] = []
        jobs.reserveCapacity(batch.groups.reduce(0) { $0 + $1.targets.count })
        for (groupIndex, group) in batch.groups.enumerated() {
            // Named only when something is wrong: a String per group would be made for every message read.
            func field() -> String { "PushJobBatch.groups[\(groupIndex)]" }
            let platform = try Platform(wire: group.platform, "\(field()).platform")
            let notificationId = try UUID(wireHigh: group.notificationIDHigh, low: group.notificationIDLow, "\(field()).notification_id")
            let kind = try ChangeKind(wire: group.kind, "\(field()).kind")
            let priority = try NotificationPriority(wire: group.priority, "\(field()).priority")
            let expiration = Date(wireMicros: group.expirationMicros)
            let changedAt = group.changedAtMicros == 0 ? nil : Date(wireMicros: group.changedAtMicros)
            let displayGroup = group.hasDisplayGroup ? group.displayGroup : nil
            for (targetIndex, target) in group.targets.enumerated() {
                var job = PushJob(
                    pushId: try UUID(wireHigh: target.pushIDHigh, low: target.pushIDLow, "\(field()).targets[\(targetIndex)].push_id"),
                    appId: group.appID,
                    subscriptionId: try UUID(
                        wireHigh: target.subscriptionIDHigh, low: target.subscriptionIDLow, "\(field()).targets[\(targetIndex)].subscription_id"),
                    platform: platform, deviceToken: target.deviceToken, notificationId: notificationId, sequence: group.sequence,
                    kind: kind, isAlert: group.isAlert, priority: priority, expiration: expiration, collapseId: group.collapseID,
                    payload: group.payload, attempt: Int(group.attempt), keys: target.hasKeys ? WebPushKeys(wire: target.keys) : nil,
                    changedAt: changedAt, displayGroup: displayGroup, appPackage: target.hasAppPackage ? target.appPackage : nil)
                job.isVisualFallback = group.visualFallback
                jobs.append(job)
            }
        }
        self.init(jobs: jobs)
    }
}

extension PushJobBatch {
    /// How many jobs a message in the protobuf form holds, counted without decoding them (nil: not such a message):
    /// `loadgen fanout` counts every job the fan-out worker makes, and decoding them would take CPU from the worker it
    /// measures. It walks the wire format's tags: the targets (field 12) of every group (field 2).
    public static func jobCount(wireBytes: Data) -> Int? {
        wireBytes.withUnsafeBytes { bytes in
            var count = 0
            let complete = ProtobufFields.forEach(in: bytes[...]) { field, value in
                guard field == 2, let group = value else { return true }
                return ProtobufFields.forEach(in: group) { field, _ in
                    if field == 12 { count += 1 }
                    return true
                }
            }
            return complete ? count : nil
        }
    }
}

/// The fields of a protobuf message, read from its wire format without decoding them.
enum ProtobufFields {
    /// Calls `body` with each field's number and, for a length-delimited one, its bytes; false when the bytes are not
    /// a well-formed message or `body` answered false.
    static func forEach(in bytes: Slice<UnsafeRawBufferPointer>, _ body: (Int, Slice<UnsafeRawBufferPointer>?) -> Bool) -> Bool {
        var index = bytes.startIndex
        func varint() -> UInt64? {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while index < bytes.endIndex, shift < 64 {
                let byte = bytes[index]
                index += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
            return nil
        }
        while index < bytes.endIndex {
            guard let tag = varint() else { return false }
            let field = Int(tag >> 3)
            var value: Slice<UnsafeRawBufferPointer>?
            switch tag & 7 {
            case 0: guard varint() != nil else { return false }
            case 1: index += 8
            case 5: index += 4
            case 2:
                guard let length = varint(), length <= UInt64(bytes.endIndex - index) else { return false }
                value = bytes[index..<index + Int(length)]
                index += Int(length)
            default: return false
            }
            guard index <= bytes.endIndex, body(field, value) else { return false }
        }
        return true
    }
}
