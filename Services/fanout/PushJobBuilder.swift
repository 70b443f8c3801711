import Foundation
import NotifyModels

/// Builds the push jobs of one change event: the payload once, then a job per target device.
enum PushJobBuilder {
    static func jobs(for event: ChangeEvent, devices: [SubscriptionResolver.Device]) -> [PushJob] {
        let targets = devices.filter { device in
            device.subscriptionId != event.originSubscriptionId
                && (event.content?.platformTypes?.contains(device.platform) ?? true)
        }
        guard !targets.isEmpty else { return [] }
        let isAlert = event.kind.isContentChange && (event.content?.isVisual ?? false)
        let marker = APNsPayloadBuilder.Marker(notificationId: event.notificationId, sequence: event.sequence, kind: event.kind)
        let payload = String(decoding: APNsPayloadBuilder.payload(for: event.content, marker: marker, badge: event.unreadCount), as: UTF8.self)
        let priority: NotificationPriority = isAlert ? (event.content?.priority ?? .high) : .low
        let expiration = event.content?.expirationDateTime ?? event.changedAt.addingTimeInterval(24 * 3600)
        let collapseId = event.notificationId.uuidString.lowercased()
        return targets.map { device in
            PushJob(
                pushId: DeterministicID.pushID(notificationId: event.notificationId, sequence: event.sequence, subscriptionId: device.subscriptionId),
                appId: event.appId, subscriptionId: device.subscriptionId, platform: device.platform, deviceToken: device.pushToken,
                notificationId: event.notificationId, sequence: event.sequence, kind: event.kind, isAlert: isAlert,
                priority: priority, expiration: expiration, collapseId: collapseId, payload: payload)
        }
    }
}
