/// Whether the user has read a notification.
public enum ReadState: String, Codable, Sendable, CaseIterable {
    case unread, read
}

/// What the user did with a notification, as in the Rome SDK's `UserActionState`.
public enum UserActionState: String, Codable, Sendable, CaseIterable {
    case noInteraction, activated, dismissed, snoozed
}

/// Lifecycle of a stored notification.
public enum NotificationStatus: String, Codable, Sendable, CaseIterable {
    case active, expired, deleted
}

/// Delivery priority as the app server asks for it.
public enum NotificationPriority: String, Codable, Sendable, CaseIterable {
    case high, low, none
}

/// A device's push platform.
///
/// `apns-voip` is an iPhone's PushKit token: a subscription of its own, reached through APNs with
/// `apns-push-type: voip`. Apple ends an app that gets a VoIP push without reporting a call, so such
/// a device receives only notifications whose `targetPolicy.platformTypes` names `apns-voip`, and
/// never the read/dismissed/deleted changes of other devices.
///
/// `polling` is a device without a push channel (it syncs on its own schedule or holds the live stream): registered
/// without a push token, it has an id to name itself with (`X-Subscription-Id`) and renews like the others; nothing is
/// pushed to it.
public enum Platform: String, Codable, Sendable, CaseIterable {
    case apns, fcm, wns, webpush
    case apnsVoip = "apns-voip"
    case polling

    /// Whether devices of this platform are pushed (all but `polling`).
    public var isPushed: Bool { self != .polling }

    /// The provider that delivers to this platform's devices (its queue, credentials and client).
    public var provider: Platform { self == .apnsVoip ? .apns : self }

    /// The push providers, one work queue each.
    public static let providers: [Platform] = [.apns, .fcm, .wns, .webpush]
}
