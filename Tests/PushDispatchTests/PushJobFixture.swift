import Foundation
import NotifyModels

extension PushJob {
    /// A job of these tests: an hour left before it expires, attempted `attempt` times before.
    static func fixture(
        _ platform: Platform = .fcm, appId: String = "app_test", deviceToken: String = "device-token", kind: ChangeKind = .created,
        isAlert: Bool = true, priority: NotificationPriority = .high, payload: String = #"{"notification":{"title":"Hi"}}"#,
        keys: WebPushKeys? = nil, attempt: Int = 0
    ) -> PushJob {
        let notificationId = UUID()
        return PushJob(
            pushId: UUID(), appId: appId, subscriptionId: UUID(), platform: platform, deviceToken: deviceToken, notificationId: notificationId,
            sequence: 7, kind: kind, isAlert: isAlert, priority: priority, expiration: Date().addingTimeInterval(3600),
            collapseId: notificationId.uuidString.lowercased(), payload: payload, attempt: attempt, keys: keys)
    }
}
