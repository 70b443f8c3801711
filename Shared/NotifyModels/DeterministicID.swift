import Crypto
import Foundation

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
        return make(hashing: input)
    }

    /// The UUID of `input`: each part's bytes followed by a zero byte.
    private static func make(hashing input: [UInt8]) -> UUID {
        var bytes = Array(SHA256.hash(data: input).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x50
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(uuid: (
            bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
            bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
        ))
    }

    /// The id of a notification published with an `appNotificationId`: the same for every republish.
    public static func notificationID(appId: String, userId: String, appNotificationId: String) -> UUID {
        make("notification", appId, userId, appNotificationId)
    }

    /// The id of one push of one change to one device (APNs `apns-id`).
    /// It is computed for every push job, so its parts ("push", both ids as `uuidString`, the sequence) are
    /// written into one buffer rather than formatted as Strings.
    public static func pushID(notificationId: UUID, sequence: Int64, subscriptionId: UUID) -> UUID {
        var input: [UInt8] = []
        input.reserveCapacity(112)
        input += "push".utf8
        input.append(0)
        notificationId.appendString(to: &input, uppercase: true)
        input.append(0)
        sequence.appendDecimal(to: &input)
        input.append(0)
        subscriptionId.appendString(to: &input, uppercase: true)
        input.append(0)
        return make(hashing: input)
    }
}
