import Crypto
import Foundation

/// Name-based UUIDs, so that a repeated publish or a repeated push carries the same id
/// and replaces rather than stacks.
public enum DeterministicID {
    /// A UUID (version 5 layout, SHA-256 based) derived from the given parts.
    public static func make(_ parts: String...) -> UUID {
        var hasher = SHA256()
        for part in parts {
            hasher.update(data: Array(part.utf8))
            hasher.update(data: [0])
        }
        var bytes = Array(hasher.finalize().prefix(16))
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
    public static func pushID(notificationId: UUID, sequence: Int64, subscriptionId: UUID) -> UUID {
        make("push", notificationId.uuidString, String(sequence), subscriptionId.uuidString)
    }
}
