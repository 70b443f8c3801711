import Foundation

/// A device registering for pushes (`POST /v1/me/subscriptions`).
public struct SubscriptionRequest: Codable, Sendable, Equatable {
    public var platform: Platform?
    /// The APNs device token (hex), FCM registration token, WNS channel URI, or Web Push endpoint URL. A `polling`
    /// device sends none the first time, then its subscription id to renew that registration.
    public var pushToken: String?
    /// Web Push only: the subscription's encryption keys (`PushSubscription.toJSON().keys`).
    public var keys: WebPushKeys?
    public var appPackage: String?
    public var displayName: String?
    /// Event sources (with the `open` policy) the device subscribes to; registering again replaces the set. Absent:
    /// the device's sources stay as they are.
    public var eventSources: [String]?
    /// The subscription this registration replaces (the same device with a new token): its event sources move to the
    /// new one, and it is removed.
    public var replacesSubscriptionId: UUID?

    public init(
        platform: Platform? = nil, pushToken: String? = nil, keys: WebPushKeys? = nil, appPackage: String? = nil, displayName: String? = nil,
        eventSources: [String]? = nil, replacesSubscriptionId: UUID? = nil
    ) {
        self.eventSources = eventSources
        self.replacesSubscriptionId = replacesSubscriptionId
        self.platform = platform
        self.pushToken = pushToken
        self.keys = keys
        self.appPackage = appPackage
        self.displayName = displayName
    }

    /// Checks the request, naming the wrong field. A `polling` registration's token is "" when it names none (a new
    /// registration), else the lowercased subscription id it renews.
    public func validated() throws(ValidationError) -> (platform: Platform, pushToken: String) {
        guard let platform else { throw .missing("platform") }
        if platform == .polling {
            if keys != nil { throw .invalid("keys", "a polling device has no Web Push keys") }
            guard let pushToken else { return (platform, "") }
            guard let renewed = UUID(uuidString: pushToken) else {
                throw .invalid("pushToken", "a polling device names no push token, or its subscription id to renew it")
            }
            return (platform, renewed.uuidString.lowercased())
        }
        guard let pushToken, !pushToken.isEmpty else { throw .missing("pushToken") }
        switch platform {
        case .apns, .apnsVoip:
            let isHex = pushToken.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) || ($0 >= 65 && $0 <= 70) }
            if !isHex || (pushToken.count != 64 && pushToken.count != 160) {
                throw .invalid("pushToken", "an APNs device token is 64 (or 160) hexadecimal characters")
            }
        case .fcm:
            if pushToken.utf8.count > 4096 { throw .invalid("pushToken", "pushToken may be at most 4096 bytes") }
        case .polling:
            break
        case .wns, .webpush:
            guard pushToken.hasPrefix("https://"), URL(string: pushToken) != nil, pushToken.utf8.count <= 4096 else {
                throw .invalid("pushToken", platform == .wns ? "a WNS channel URI is an https URL" : "a Web Push endpoint is an https URL")
            }
        }
        if platform == .webpush {
            guard let keys else { throw .missing("keys") }
            try keys.validate()
        }
        if let appPackage, appPackage.utf8.count > 256 { throw .invalid("appPackage", "appPackage may be at most 256 bytes") }
        if let displayName, displayName.utf8.count > 256 { throw .invalid("displayName", "displayName may be at most 256 bytes") }
        if let eventSources {
            if eventSources.count > 100 { throw .invalid("eventSources", "a device may subscribe to at most 100 event sources") }
            for (index, source) in eventSources.enumerated() where !EventSourceRequest.isValidName(source) {
                throw .invalid("eventSources[\(index)]", "an event source name is 1 to 100 characters of A-Z a-z 0-9 . _ : -")
            }
        }
        return (platform, platform.provider == .apns ? pushToken.lowercased() : pushToken)
    }
}
