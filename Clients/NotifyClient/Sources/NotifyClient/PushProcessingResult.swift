import Foundation
import NotifyAPI

/// What `processPushNotification` made of a push.
public enum PushProcessingResult: Sendable, Equatable {
    /// The push did not come from this service (no `notify` dictionary naming a notification).
    case notOurs
    /// The push was ours; these changes were synced and applied (possibly more than the push named).
    case processed([NotificationChange])
}

/// The marker of this service's pushes: `{"notify": {"id", "seq", "kind"}}` (APNs, Web Push, WNS raw), or FCM's flat
/// string data keys `notifyId`, `notifySeq`, `notifyKind` (an Android `RemoteMessage.data`). A push is ours when its
/// marker names a notification id.
struct PushMarker: Sendable, Equatable {
    /// The sequence of the change the push announces, when it names one.
    var sequence: Int64?

    init?(userInfo: [AnyHashable: Any]) {
        let id: Any?
        let sequence: Any?
        if let notify = userInfo["notify"] as? [AnyHashable: Any] {
            (id, sequence) = (notify["id"], notify["seq"])
        } else {
            (id, sequence) = (userInfo["notifyId"], userInfo["notifySeq"])
        }
        guard let id = id as? String, UUID(uuidString: id) != nil else { return nil }
        self.sequence = (sequence as? NSNumber)?.int64Value ?? (sequence as? String).flatMap { Int64($0) }
    }
}
