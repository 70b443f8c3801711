import Foundation

/// A stored device subscription.
public struct DeviceSubscription: Codable, Sendable, Equatable {
    public var subscriptionId: UUID
    public var appId: String
    public var userId: String
    public var platform: Platform
    public var pushToken: String
    /// Web Push only: the encryption keys.
    public var keys: WebPushKeys?
    public var appPackage: String?
    public var displayName: String?
    public var expirationDateTime: Date
    public var registeredAt: Date
    /// The event sources the device subscribes to (nil leaves them as they are).
    public var eventSources: [String]?
    /// The user's subscription this one replaces (the device's previous token): its event sources move here, and it
    /// is removed.
    public var replacesSubscriptionId: UUID?

    public init(
        subscriptionId: UUID, appId: String, userId: String, platform: Platform, pushToken: String, keys: WebPushKeys? = nil,
        appPackage: String?, displayName: String?, expirationDateTime: Date, registeredAt: Date, eventSources: [String]? = nil,
        replacesSubscriptionId: UUID? = nil
    ) {
        self.eventSources = eventSources
        self.replacesSubscriptionId = replacesSubscriptionId
        self.keys = keys
        self.subscriptionId = subscriptionId
        self.appId = appId
        self.userId = userId
        self.platform = platform
        self.pushToken = pushToken
        self.appPackage = appPackage
        self.displayName = displayName
        self.expirationDateTime = expirationDateTime
        self.registeredAt = registeredAt
    }
}
