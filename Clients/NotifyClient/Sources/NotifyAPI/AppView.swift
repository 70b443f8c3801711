import Foundation

/// An app as the operator reads it (`GET /v1/apps`, `GET /v1/apps/{appId}`): its settings, which providers have
/// credentials, its broker users and key-rotation overlaps; never a secret.
public struct AppView: Codable, Sendable, Equatable {
    /// Credentials stored for a provider.
    public struct Provider: Codable, Sendable, Equatable {
        public var provider: String
        /// The app identity these credentials serve; absent: every device of no other identity.
        public var appPackage: String?
        public var updatedAt: Date
        /// Why the provider refused the credentials (pushes wait until new ones are stored); absent: not refused.
        public var rejectedReason: String?

        public init(provider: String, appPackage: String?, updatedAt: Date, rejectedReason: String?) {
            self.provider = provider
            self.appPackage = appPackage
            self.updatedAt = updatedAt
            self.rejectedReason = rejectedReason
        }
    }

    /// A RabbitMQ user the app's servers publish as.
    public struct BrokerUser: Codable, Sendable, Equatable {
        public var user: String
        /// Absent: the current user; present: a rotation replaced it, accepted until then.
        public var retiresAt: Date?

        public init(user: String, retiresAt: Date?) {
            self.user = user
            self.retiresAt = retiresAt
        }
    }

    public var appId: String
    public var name: String
    public var createdAt: Date
    public var badgeMode: String
    public var rateLimit: RateLimit
    public var providers: [Provider]
    public var brokerUsers: [BrokerUser]
    /// While a rotated API key is still accepted: until when.
    public var previousApiKeyRetiresAt: Date?
    /// While a rotated client signing key is still accepted: until when.
    public var previousClientSigningKeyRetiresAt: Date?
    /// The identity provider whose tokens are user tokens of the app; absent: none.
    public var identityProvider: IdentityProvider?

    public init(
        appId: String, name: String, createdAt: Date, badgeMode: String, rateLimit: RateLimit, providers: [Provider] = [],
        brokerUsers: [BrokerUser] = [], previousApiKeyRetiresAt: Date? = nil, previousClientSigningKeyRetiresAt: Date? = nil,
        identityProvider: IdentityProvider? = nil
    ) {
        self.identityProvider = identityProvider
        self.appId = appId
        self.name = name
        self.createdAt = createdAt
        self.badgeMode = badgeMode
        self.rateLimit = rateLimit
        self.providers = providers
        self.brokerUsers = brokerUsers
        self.previousApiKeyRetiresAt = previousApiKeyRetiresAt
        self.previousClientSigningKeyRetiresAt = previousClientSigningKeyRetiresAt
    }
}

/// A page of `GET /v1/apps`.
public struct AppPage: Codable, Sendable, Equatable {
    public var apps: [AppView]
    /// The `pageToken` of the next page; absent on the last one.
    public var nextPageToken: String?

    public init(apps: [AppView], nextPageToken: String?) {
        self.apps = apps
        self.nextPageToken = nextPageToken
    }
}

/// `POST /v1/apps/{appId}/api-key` or `/client-signing-key`: the new key, answered once.
public struct RotatedAppKey: Codable, Sendable, Equatable {
    public var appId: String
    public var apiKey: String?
    public var clientSigningKey: String?
    /// When the replaced key stops being accepted.
    public var previousKeyRetiresAt: Date

    public init(appId: String, apiKey: String?, clientSigningKey: String?, previousKeyRetiresAt: Date) {
        self.appId = appId
        self.apiKey = apiKey
        self.clientSigningKey = clientSigningKey
        self.previousKeyRetiresAt = previousKeyRetiresAt
    }
}
