import Foundation
import NotifyAPI

/// What `processPushNotification` made of a push.
public enum PushProcessingResult: Sendable, Equatable {
    /// The push did not come from this service (no `notify` dictionary naming a notification).
    case notOurs
    /// The push was ours; these changes were synced and applied (possibly more than the push named).
    case processed([NotificationChange])
}

/// The marker of this service's pushes: `{"notify": {"id", "seq", "kind"}}` (APNs, Web Push, WNS raw), FCM's flat
/// string data keys `notifyId`, `notifySeq`, `notifyKind` (an Android `RemoteMessage.data`), or a WNS toast's launch
/// arguments, `notifyId=…&notifySeq=…`, handed over as `["launch": arguments]`. A push is ours when its marker names a
/// notification id.
struct PushMarker: Sendable, Equatable {
    /// The sequence of the change the push announces, when it names one.
    var sequence: Int64?

    init?(userInfo: [AnyHashable: Any]) {
        let id: Any?
        let sequence: Any?
        if let notify = userInfo["notify"] as? [AnyHashable: Any] {
            (id, sequence) = (notify["id"], notify["seq"])
        } else if let launch = userInfo["launch"] as? String {
            var arguments: [String: String] = [:]
            for pair in launch.split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2 { arguments[String(parts[0])] = String(parts[1]) }
            }
            (id, sequence) = (arguments["notifyId"], arguments["notifySeq"])
        } else {
            (id, sequence) = (userInfo["notifyId"], userInfo["notifySeq"])
        }
        guard let id = id as? String, UUID(uuidString: id) != nil else { return nil }
        self.sequence = (sequence as? NSNumber)?.int64Value ?? (sequence as? String).flatMap { Int64($0) }
    }
}
