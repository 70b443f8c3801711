import Foundation

/// `POST /v1/apps`: the app and its secrets, answered this once.
public struct CreatedApp: Codable, Sendable, Equatable {
    public var appId: String
    public var name: String
    public var apiKey: String
    public var clientSigningKey: String
    public var badgeMode: BadgeMode
    /// The app's broker user, when it was created with broker access.
    public var broker: BrokerCredentials?

    public init(appId: String, name: String, apiKey: String, clientSigningKey: String, badgeMode: BadgeMode, broker: BrokerCredentials?) {
        self.appId = appId
        self.name = name
        self.apiKey = apiKey
        self.clientSigningKey = clientSigningKey
        self.badgeMode = badgeMode
        self.broker = broker
    }
}

/// `PATCH /v1/apps/{appId}`: the settings to change (a field left out is kept), and as answered, all of them.
public struct AppSettings: Codable, Sendable, Equatable {
    public var badgeMode: BadgeMode?
    /// Publish limits per ingest instance; a field left out (or null) is the service's default.
    public var rateLimit: RateLimit?
    /// The identity provider whose tokens are user tokens of the app. nil: left out (a PATCH keeps it); `.some(nil)`:
    /// JSON `null`, none (a PATCH removes it; an answer says the app has none).
    public var identityProvider: IdentityProvider??

    public init(badgeMode: BadgeMode? = nil, rateLimit: RateLimit? = nil, identityProvider: IdentityProvider?? = nil) {
        self.badgeMode = badgeMode
        self.rateLimit = rateLimit
        self.identityProvider = identityProvider
    }

    private enum CodingKeys: String, CodingKey {
        case badgeMode, rateLimit, identityProvider
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        badgeMode = try container.decodeIfPresent(BadgeMode.self, forKey: .badgeMode)
        rateLimit = try container.decodeIfPresent(RateLimit.self, forKey: .rateLimit)
        if container.contains(.identityProvider) {
            identityProvider = .some(try container.decodeNil(forKey: .identityProvider) ? nil : try container.decode(IdentityProvider.self, forKey: .identityProvider))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(badgeMode, forKey: .badgeMode)
        try container.encodeIfPresent(rateLimit, forKey: .rateLimit)
        if let identityProvider {
            if let provider = identityProvider {
                try container.encode(provider, forKey: .identityProvider)
            } else {
                try container.encodeNil(forKey: .identityProvider)
            }
        }
    }
}

/// `POST /v1/apps/{appId}/broker-credentials`: the new broker user, and the ones it replaces.
public struct RotatedBrokerCredentials: Codable, Sendable, Equatable {
    /// A replaced user: accepted until `retiresAt`, then deleted.
    public struct Retiring: Codable, Sendable, Equatable {
        public var user: String
        public var retiresAt: Date

        public init(user: String, retiresAt: Date) {
            self.user = user
            self.retiresAt = retiresAt
        }
    }

    public var broker: BrokerCredentials
    public var retiring: [Retiring]

    public init(broker: BrokerCredentials, retiring: [Retiring]) {
        self.broker = broker
        self.retiring = retiring
    }
}

/// `PUT /v1/apps/{appId}/providers/{provider}`: the credentials as stored, never a secret; each provider fills its own.
public struct StoredProvider: Codable, Sendable, Equatable {
    public var appId: String
    public var provider: Platform
    /// The app identity these credentials serve (devices registered with this appPackage); absent: every other device.
    public var appPackage: String?
    public var teamId: String?
    public var keyId: String?
    public var topic: String?
    /// APNs: `sandbox` or `production`.
    public var environment: String?
    public var endpoint: String?
    public var projectId: String?
    public var clientEmail: String?
    public var packageSid: String?
    public var subject: String?
    /// The VAPID public key (base64url, uncompressed point): the browser's `applicationServerKey`.
    public var vapidPublicKey: String?

    public init(appId: String, provider: Platform, appPackage: String? = nil) {
        self.appId = appId
        self.provider = provider
        self.appPackage = appPackage
    }
}
