#if canImport(UserNotifications)
import Foundation
import UserNotifications

extension NotifyClient {
    /// Removes from the notification centre the alerts of the local cache whose `displayTimeToLive` has passed by `now`
    /// (`notificationsPastDisplayTime(at:)`). An alert's identifier there is its notification id: the service sends it
    /// as `apns-collapse-id`, which iOS makes the notification request's identifier. Call it when the app becomes
    /// active and after a sync. Built on Apple platforms only (this repository's Linux CI does not compile it).
    public func removeAlertsPastDisplayTime(at now: Date = Date()) {
        let identifiers = notificationsPastDisplayTime(at: now).map { $0.id.uuidString.lowercased() }
        guard !identifiers.isEmpty else { return }
        UNUserNotificationCenter.current().removeDeliveredNotifications(withIdentifiers: identifiers)
    }
}
#endif
