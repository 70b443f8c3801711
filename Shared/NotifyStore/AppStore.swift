import Foundation
import NotifyModels

/// Apps and what hangs off each (keys, provider credentials, broker users, badges, poll sources, webhooks), as
/// authentication and the operator's and app servers' calls read them. Secrets are answered as stored (sealed or
/// hashed); opening them is the caller's. `PostgresAppStore` reads the shared tables; NotifyStoreTesting holds one in
/// memory.
public protocol AppStore: Sendable {
    /// What authenticating the app's callers needs; nil when there is no such app.
    func credentials(appId: String) async throws -> StoredAppCredentials?
    /// Apps in id order after `after` (or the one with `appId`), at most `limit`, with their providers and broker users.
    func apps(after: String?, limit: Int, appId: String?) async throws -> [AppView]
    /// Whether nothing of the app is left: no app and none of its broker users (those go once RabbitMQ deleted them).
    func isGone(appId: String) async throws -> Bool
    /// The sealed provider credentials stored for the app's package (`""`: the app's default ones).
    func providerSecret(appId: String, provider: String, appPackage: String) async throws -> String?
    /// Whether storage created the broker user in RabbitMQ.
    func isProvisioned(brokerUser user: String) async throws -> Bool
    /// The app's scoped keys (the one with `keyId`), newest first, without their secrets.
    func apiKeys(appId: String, keyId: String?) async throws -> [APIKeyView]
    /// The badge the app server set for the user (external badge mode); nil when it set none.
    func externalBadge(appId: String, userId: String) async throws -> Int?
    /// The app's poll sources (the one named), by name.
    func pollSources(appId: String, named name: String?) async throws -> [PollSourceView]
    /// Every app's poll sources, their Authorization headers sealed.
    func allPollSources() async throws -> [PollSourceRecord]
    /// What a poll source served: the digest of the item each polled notification was last made from, by notification.
    func pollLedger(appId: String, source: String) async throws -> [UUID: String]
    /// The app's webhook, its secret sealed; nil when it has none.
    func webhook(appId: String) async throws -> StoredWebhook?
    /// The app's latest webhook attempts, newest first.
    func webhookAttempts(appId: String, limit: Int) async throws -> [WebhookAttempt]
}

/// An app's keys and settings as stored: its API key's hash and sealed client signing key (with the previous ones
/// during a rotation's overlap), badge mode, rate limit, identity provider, broker users and scoped keys.
public struct StoredAppCredentials: Sendable {
    public var apiKeyHash: String
    public var sealedClientSigningKey: String
    public var badgeMode: BadgeMode
    public var rateLimit: RateLimit
    public var previousAPIKeyHash: (hash: String, retiresAt: Date)?
    public var previousSealedClientSigningKey: (sealed: String, retiresAt: Date)?
    public var identityProvider: IdentityProvider?
    /// User name → when it retires (nil: the current one).
    public var brokerUsers: [String: Date?]
    /// Unrevoked scoped keys by hash.
    public var scopedKeys: [String: (keyId: String, scope: APIKeyScope)]

    public init(
        apiKeyHash: String, sealedClientSigningKey: String, badgeMode: BadgeMode, rateLimit: RateLimit,
        previousAPIKeyHash: (hash: String, retiresAt: Date)? = nil, previousSealedClientSigningKey: (sealed: String, retiresAt: Date)? = nil,
        identityProvider: IdentityProvider? = nil, brokerUsers: [String: Date?] = [:], scopedKeys: [String: (keyId: String, scope: APIKeyScope)] = [:]
    ) {
        self.apiKeyHash = apiKeyHash
        self.sealedClientSigningKey = sealedClientSigningKey
        self.badgeMode = badgeMode
        self.rateLimit = rateLimit
        self.previousAPIKeyHash = previousAPIKeyHash
        self.previousSealedClientSigningKey = previousSealedClientSigningKey
        self.identityProvider = identityProvider
        self.brokerUsers = brokerUsers
        self.scopedKeys = scopedKeys
    }
}

/// An app's webhook as stored.
public struct StoredWebhook: Sendable, Equatable {
    public var url: String
    public var events: [WebhookEventType]
    public var sealedSecret: String

    public init(url: String, events: [WebhookEventType], sealedSecret: String) {
        self.url = url
        self.events = events
        self.sealedSecret = sealedSecret
    }
}

extension IdentityProvider {
    /// The provider an `apps` row names in its `identity_*` columns; nil when it names none.
    public static func stored(issuer: String?, jwksUrl: String?, audience: String?, userIdClaim: String?) -> IdentityProvider? {
        guard let issuer, let audience else { return nil }
        return IdentityProvider(issuer: issuer, jwksUrl: jwksUrl, audience: audience, userIdClaim: userIdClaim ?? defaultUserIdClaim)
    }
}
