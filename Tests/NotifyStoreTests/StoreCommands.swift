import Foundation
import NotifyModels

/// Storage commands the store tests apply to set up what they read: one copy each.
enum StoreCommands {
    /// A visual notification's content titled `title`, expiring in an hour.
    static func content(title: String = "b", groupName: String? = nil) -> NotificationContent {
        NotificationContent(
            appNotificationId: nil, groupName: groupName, priority: .high, expirationDateTime: Date().addingTimeInterval(3600),
            displayTimeToLive: nil, platformTypes: nil, payload: NotificationPayload(visualContent: VisualContent(title: title)), push: nil)
    }

    /// A broadcast `id` to the members of the app's source "news", received now.
    static func broadcast(_ id: UUID = UUID(), appId: String) -> StorageCommand {
        StorageCommand(action: .publishBroadcast(PublishedBroadcast(
            appId: appId, eventSource: "news", notificationId: id, content: content(), receivedAt: Date())))
    }

    /// An APNs device `id` of `user`, registered now for a day.
    static func register(_ id: UUID, appId: String, user: String) -> StorageCommand {
        StorageCommand(action: .registerSubscription(DeviceSubscription(
            subscriptionId: id, appId: appId, userId: user, platform: .apns, pushToken: UUID().lowercasedString, appPackage: nil,
            displayName: nil, expirationDateTime: Date().addingTimeInterval(86_400), registeredAt: Date())))
    }
}
