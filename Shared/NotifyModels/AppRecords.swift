import Foundation

/// A tenant: an app with its app-server key (stored hashed) and the key that signs its user tokens.
public struct AppRecord: Codable, Sendable, Equatable {
    /// The PostgreSQL channel on which storage announces, at commit, that an app's row or its broker users changed
    /// (payload: the app id), so that readers caching apps (ingest) read it again.
    public static let changedChannel = "notify_app_changed"

    public var appId: String
    public var name: String
    /// Hex SHA-256 of the API key; the key itself is shown once and never stored.
    public var apiKeyHash: String
    /// The HMAC-SHA256 secret (base64url) that signs the app's user tokens (HS256 JWTs), sealed
    /// (`SecretKeyring`, purpose `.clientSigningKey`).
    public var clientSigningKey: String
    /// The app's first RabbitMQ user, created in RabbitMQ by an older ingest before it sent the app (this ingest sends a
    /// new app's broker user as a `putBrokerUser` of its own, which storage creates); kept while such ingests may run.
    public var brokerUser: String?
    public var createdAt: Date
    public var badgeMode: BadgeMode

    public init(
        appId: String, name: String, apiKeyHash: String, clientSigningKey: String, brokerUser: String?, createdAt: Date,
        badgeMode: BadgeMode = .unread
    ) {
        self.appId = appId
        self.name = name
        self.apiKeyHash = apiKeyHash
        self.clientSigningKey = clientSigningKey
        self.brokerUser = brokerUser
        self.createdAt = createdAt
        self.badgeMode = badgeMode
    }
}

/// A rotation of an app's API key or client signing key (or both): the new key replaces the current one, which stays
/// accepted until `retiresAt` (the overlap in which app servers and apps move to the new one).
public struct AppKeyRotation: Codable, Sendable, Equatable {
    public var appId: String
    /// Hex SHA-256 of the new API key; nil: the API key stays.
    public var apiKeyHash: String?
    /// The new client signing key, sealed; nil: the signing key stays.
    public var clientSigningKey: String?
    public var retiresAt: Date

    public init(appId: String, apiKeyHash: String?, clientSigningKey: String?, retiresAt: Date) {
        self.appId = appId
        self.apiKeyHash = apiKeyHash
        self.clientSigningKey = clientSigningKey
        self.retiresAt = retiresAt
    }
}

/// A RabbitMQ user an app server publishes to `notify.ingest` as (RabbitMQ checks the message's `user_id` is the
/// connection's user; ingest checks that user is one of the app's).
public struct BrokerUserRecord: Codable, Sendable, Equatable {
    public var appId: String
    public var user: String
    public var createdAt: Date
    /// nil: the app's current user. Set: a rotation replaced it; accepted until then, then deleted.
    public var retiresAt: Date?
    /// For a new user: RabbitMQ's hash of its password (`BrokerPasswordHash`), which storage creates the user with.
    /// nil: the user exists in RabbitMQ already (a retirement, or a user an older ingest created itself).
    public var passwordHash: String?

    public init(appId: String, user: String, createdAt: Date, retiresAt: Date?, passwordHash: String? = nil) {
        self.appId = appId
        self.user = user
        self.createdAt = createdAt
        self.retiresAt = retiresAt
        self.passwordHash = passwordHash
    }
}

/// An event source of an app: a named audience of devices, for broadcasts and for narrowing a user's pushes.
public struct EventSourceRecord: Codable, Sendable, Equatable {
    public var appId: String
    public var name: String
    public var policy: EventSourcePolicy
    public var description: String?
    public var createdAt: Date

    public init(appId: String, name: String, policy: EventSourcePolicy, description: String?, createdAt: Date) {
        self.appId = appId
        self.name = name
        self.policy = policy
        self.description = description
        self.createdAt = createdAt
    }
}

/// A back end an app's notifications are polled from.
public struct PollSourceRecord: Codable, Sendable, Equatable {
    public var appId: String
    public var name: String
    public var url: String
    public var intervalSeconds: Int
    /// The Authorization header sent with each poll, sealed (`SecretKeyring`, purpose `.pollSourceAuthorization`).
    public var authorization: String?
    public var createdAt: Date

    public init(appId: String, name: String, url: String, intervalSeconds: Int, authorization: String?, createdAt: Date) {
        self.appId = appId
        self.name = name
        self.url = url
        self.intervalSeconds = intervalSeconds
        self.authorization = authorization
        self.createdAt = createdAt
    }
}

/// APNs token-auth credentials of one app (`PUT /v1/apps/{appId}/providers/apns`).
public struct APNsCredentials: Codable, Sendable, Equatable {
    public enum Environment: String, Codable, Sendable {
        case sandbox, production
    }

    public var teamId: String
    public var keyId: String
    /// The .p8 key (PKCS#8 PEM) Apple issued.
    public var privateKey: String
    /// The app's bundle id, sent as `apns-topic`.
    public var topic: String
    public var environment: Environment
    /// Overrides the APNs host, e.g. `https://localhost:21443` for the provider sandbox.
    public var endpoint: String?

    public init(teamId: String, keyId: String, privateKey: String, topic: String, environment: Environment, endpoint: String?) {
        self.teamId = teamId
        self.keyId = keyId
        self.privateKey = privateKey
        self.topic = topic
        self.environment = environment
        self.endpoint = endpoint
    }

    /// The base URL pushes go to.
    public var baseURL: String {
        if let endpoint { return endpoint }
        switch environment {
        case .production: return "https://api.push.apple.com"
        case .sandbox: return "https://api.sandbox.push.apple.com"
        }
    }

    /// Checks the fields that can be checked without talking to Apple.
    public func validate() throws(ValidationError) {
        if teamId.count != 10 { throw .invalid("teamId", "teamId is the 10-character Apple team id") }
        if keyId.count != 10 { throw .invalid("keyId", "keyId is the 10-character id of the .p8 key") }
        if topic.isEmpty { throw .missing("topic") }
        if let endpoint, !(endpoint.hasPrefix("https://")) { throw .invalid("endpoint", "endpoint must be an https URL") }
    }
}

/// One of an app's scoped API keys as stored: its hash, never the key.
public struct APIKeyRecord: Codable, Sendable, Equatable {
    public var appId: String
    /// `key_` and 16 hex digits: how the key is named in listings, revocations and logs.
    public var keyId: String
    /// Lowercase hex SHA-256 of the key.
    public var keyHash: String
    public var scope: APIKeyScope
    public var name: String
    public var createdAt: Date

    public init(appId: String, keyId: String, keyHash: String, scope: APIKeyScope, name: String, createdAt: Date) {
        self.appId = appId
        self.keyId = keyId
        self.keyHash = keyHash
        self.scope = scope
        self.name = name
        self.createdAt = createdAt
    }
}
