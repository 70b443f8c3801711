import Crypto
import Foundation
import NotifyJSON

/// Name-based UUIDs, so that a repeated publish or a repeated push carries the same id
/// and replaces rather than stacks.
public enum DeterministicID {
    /// A UUID (version 5 layout, SHA-256 based) derived from the given parts.
    public static func make(_ parts: String...) -> UUID {
        var input: [UInt8] = []
        for part in parts {
            input += part.utf8
            input.append(0)
        }
        return uuid(of: SHA256.hash(data: input))
    }

    /// A version 5 layout UUID from the first 16 bytes of a digest.
    fileprivate static func uuid(of digest: SHA256.Digest) -> UUID {
        digest.withUnsafeBytes { bytes in
            UUID(uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], (bytes[6] & 0x0F) | 0x50, bytes[7],
                (bytes[8] & 0x3F) | 0x80, bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
        }
    }

    /// The id of a notification published with an `appNotificationId`: the same for every republish.
    public static func notificationID(appId: String, userId: String, appNotificationId: String) -> UUID {
        make("notification", appId, userId, appNotificationId)
    }

    /// The id of one push of one change to one device (APNs `apns-id`).
    public static func pushID(notificationId: UUID, sequence: Int64, subscriptionId: UUID) -> UUID {
        PushIDs(notificationId: notificationId, sequence: sequence).id(subscriptionId: subscriptionId)
    }
}

/// The push ids of one change, one per device: the name-based UUID of "push", the notification id, the
/// sequence and the subscription id (as `uuidString`s), each followed by a zero byte. It is computed for
/// every push job, so the part naming the change is written once and nothing is formatted as a String.
public struct PushIDs: Sendable {
    /// `push\0<notification id>\0<sequence>\0`
    private let changePart: [UInt8]

    public init(notificationId: UUID, sequence: Int64) {
        var changePart: [UInt8] = []
        changePart.reserveCapacity(64)
        changePart += "push".utf8
        changePart.append(0)
        notificationId.appendString(to: &changePart, uppercase: true)
        changePart.append(0)
        sequence.appendDecimal(to: &changePart)
        changePart.append(0)
        self.changePart = changePart
    }

    /// The id of this change's push to the device with `subscriptionId`.
    public func id(subscriptionId: UUID) -> UUID {
        var hasher = SHA256()
        hasher.update(data: changePart)
        subscriptionId.withString(uppercase: true) { hasher.update(bufferPointer: $0) }
        withUnsafeBytes(of: UInt8(0)) { hasher.update(bufferPointer: $0) }
        return DeterministicID.uuid(of: hasher.finalize())
    }
}

extension DeterministicID {
    /// The key of one delivery-log row: every push, attempt and result it records, in order, so a feedback
    /// message delivered twice writes its row once, while another attempt or answer gets a row of its own.
    public static func deliveryRecordKey<Outcomes: Collection>(of outcomes: Outcomes) -> UUID where Outcomes.Element == PushOutcome {
        var hasher = SHA256()
        for outcome in outcomes {
            withUnsafeBytes(of: outcome.pushId.uuid) { hasher.update(bufferPointer: $0) }
            withUnsafeBytes(of: Int64(outcome.attempt).littleEndian) { hasher.update(bufferPointer: $0) }
            var result = outcome.result.rawValue
            result.withUTF8 { hasher.update(bufferPointer: UnsafeRawBufferPointer($0)) }
            withUnsafeBytes(of: UInt8(0)) { hasher.update(bufferPointer: $0) }
        }
        return uuid(of: hasher.finalize())
    }
}
