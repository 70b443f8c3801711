import Foundation
import NotifyAPI

/// What `processPushNotification` made of a push.
public enum PushProcessingResult: Sendable, Equatable {
    /// The push did not come from this service (no `notify` dictionary naming a notification).
    case notOurs
    /// The push was ours; these changes were synced and applied (possibly more than the push named).
    case processed([NotificationChange])
}

/// The `{"notify": {"id", "seq", "kind"}}` part of this service's pushes.
/// A push is ours when that dictionary names a notification id.
struct PushMarker: Sendable, Equatable {
    /// The sequence of the change the push announces, when it names one.
    var sequence: Int64?

    init?(userInfo: [AnyHashable: Any]) {
        guard let notify = userInfo["notify"] as? [AnyHashable: Any],
              let id = notify["id"] as? String, UUID(uuidString: id) != nil
        else { return nil }
        sequence = (notify["seq"] as? NSNumber)?.int64Value ?? (notify["seq"] as? String).flatMap { Int64($0) }
    }
}
