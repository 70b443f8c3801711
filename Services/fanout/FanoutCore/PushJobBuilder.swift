import Foundation
import NotifyAPNsCore
import NotifyModels
import NotifyStore

/// Builds the push jobs of one change event: each provider's payload once, then a job per target device.
enum PushJobBuilder {
    /// FCM refuses a TTL over 28 days (INVALID_ARGUMENT).
    static let fcmMaximumTTL = 28 * 24 * 3600

    /// `broadcastBadge`: the badge of a broadcast's push, as the handler resolved it for these devices' users.
    /// `visualFallback`: a new notification with raw and visual content reaches an iOS device as a shoulder tap, and its
    /// alert follows as a fallback job (sent only if the device did not sync in time; see `PushJobMessages`).
    static func jobs(
        for event: ChangeEvent, devices: [PushDevice], broadcastBadge: Int? = nil, visualFallback: Bool = false
    ) -> [PushJob] {
        let isAlert = event.kind.isContentChange && (event.content?.isAlert ?? false)
        let targets = devices.filter { device in
            guard device.subscriptionId != event.originSubscriptionId, device.platform.isPushed else { return false }
            // A publish that named devices (a subscriptionId, or the user's members of an event source) pushes only those.
            if let named = event.pushSubscriptionIds, !named.contains(device.subscriptionId) { return false }
            // A VoIP push must report a call: only new content that names apns-voip reaches a PushKit token.
            if device.platform == .apnsVoip {
                return event.kind.isContentChange && event.content?.platformTypes?.contains(.apnsVoip) == true
            }
            // A browser must show every push it gets (userVisibleOnly): Web Push gets alerts only. A state change, a
            // raw or silent notification reaches the browser's page when it next reads the changes feed.
            if device.platform == .webpush, !isAlert { return false }
            return event.content?.platformTypes?.contains(device.platform) ?? true
        }
        guard !targets.isEmpty else { return [] }
        // Stored and synced, never pushed (a later change of its state is).
        if event.kind.isContentChange, let content = event.content, content.delivery == .none { return [] }
        let marker = PushMarker(notificationId: event.notificationId, sequence: event.sequence, kind: event.kind)
        let priority: NotificationPriority = isAlert ? (event.content?.priority ?? .high) : .low
        let notificationExpiration = event.content?.expirationDateTime ?? event.changedAt.addingTimeInterval(24 * 3600)
        // An alert is worth showing only while its displayTimeToLive lasts: past it, the providers drop it (and the
        // client library removes a shown one, NotifyClient.notificationsPastDisplayTime); the device still syncs it.
        let expiration = isAlert
            ? min(notificationExpiration, event.content?.displayTimeToLive.map { event.changedAt.addingTimeInterval(TimeInterval($0)) } ?? .distantFuture)
            : notificationExpiration
        let collapseId = event.notificationId.lowercasedString
        // The user's badge as the app's mode counts it (none: nil), unless this content names its own.
        let badge = event.eventSource == nil ? event.badge.map { event.kind.isContentChange ? event.content?.push?.badge ?? $0 : $0 } : broadcastBadge
        var payloads: [Platform: String] = [:]
        func payload(_ platform: Platform) -> String {
            if let built = payloads[platform] { return built }
            let bytes: [UInt8]
            switch platform {
            case .apns:
                bytes = APNsPayloadBuilder.payload(for: event.content, marker: marker, badge: badge)
            case .apnsVoip:
                bytes = APNsPayloadBuilder.voipPayload(for: event.content, marker: marker)
            case .fcm:
                bytes = ProviderPayloads.fcmMessage(
                    for: event.content, marker: marker, badge: badge, collapseKey: collapseId,
                    highPriority: priority == .high, ttlSeconds: min(Int(expiration.timeIntervalSince(event.changedAt)), Self.fcmMaximumTTL))
            case .wns where isAlert:
                bytes = ProviderPayloads.wnsToast(for: event.content!, marker: marker)
            case .wns, .webpush, .polling:
                // (A polling device is never a target: filtered out above.)
                bytes = ProviderPayloads.data(for: event.content, marker: marker, badge: badge)
            }
            let text = String(decoding: bytes, as: UTF8.self)
            payloads[platform] = text
            return text
        }
        // A call is pushed at the publisher's priority whether or not it has visual content.
        let callPriority = event.content?.priority ?? .high
        let pushIDs = PushIDs(notificationId: event.notificationId, sequence: event.sequence)
        let tapFirst = visualFallback && isAlert && event.eventSource == nil && event.kind == .created
            && event.content?.payload.rawContent != nil
        var fallbacks: [PushJob] = []
        var jobs = targets.map { device in
            PushJob(
                pushId: pushIDs.id(subscriptionId: device.subscriptionId),
                appId: event.appId, subscriptionId: device.subscriptionId, platform: device.platform, deviceToken: device.pushToken,
                notificationId: event.notificationId, sequence: event.sequence, kind: event.kind, isAlert: isAlert,
                priority: device.platform == .apnsVoip ? callPriority : priority, expiration: expiration, collapseId: collapseId, payload: payload(device.platform), keys: device.keys,
                changedAt: event.changedAt, displayGroup: isAlert ? event.content?.groupName : nil, appPackage: device.appPackage)
        }
        guard tapFirst, let content = event.content else { return jobs }
        // iOS devices: the shoulder tap now (a background push of the same content), the alert as a fallback.
        var silent = content
        var options = silent.push ?? PushOptions()
        options.delivery = .silent
        silent.push = options
        let tap = String(decoding: APNsPayloadBuilder.payload(for: silent, marker: marker, badge: badge), as: UTF8.self)
        for index in jobs.indices where jobs[index].platform == .apns {
            var fallback = jobs[index]
            fallback.isVisualFallback = true
            fallbacks.append(fallback)
            jobs[index].isAlert = false
            jobs[index].priority = .low
            jobs[index].payload = tap
            jobs[index].expiration = notificationExpiration
            jobs[index].displayGroup = nil
        }
        return jobs + fallbacks
    }
}
