import Crypto
import Foundation
import JWTKit
import Logging
import NotifyJSON
import NotifyModels
import NotifyStore
import Synchronization

/// Apps as ingest needs them (key hash, signing key, broker users), read from a source (PostgreSQL through the
/// read-only role) and cached briefly so that authenticating a request costs no query.
final class AppDirectory: Sendable {
    struct App: Sendable {
        var appId: String
        var apiKeyHash: String
        /// The API key a rotation replaced (its hash) and when it stops being accepted.
        var previousAPIKey: (hash: String, retiresAt: Date)?
        /// The app's RabbitMQ users and when each retires (nil: the current one).
        var brokerUsers: [String: Date?]
        /// The app's client signing key, as jwt-kit checks user tokens with it.
        var tokenKeys: JWTKeyCollection
        /// The signing key a rotation replaced, and when tokens it signed stop being accepted.
        var previousTokenKeys: (keys: JWTKeyCollection, retiresAt: Date)?
        var badgeMode: BadgeMode
        /// The operator's limits for this app (nil fields: the service's defaults).
        var rateLimit: RateLimit
        /// The app's scoped API keys that are not revoked, by the hash of the key.
        var scopedKeys: [String: (keyId: String, scope: APIKeyScope)] = [:]
        /// The identity provider whose tokens are user tokens of the app (nil: only its own HS256 ones).
        var identityProvider: IdentityProvider?

        /// `clientSigningKey` and `previousClientSigningKey` in plaintext.
        init(
            appId: String, apiKeyHash: String, clientSigningKey: String, brokerUsers: [String: Date?], badgeMode: BadgeMode = .unread,
            rateLimit: RateLimit = RateLimit(), previousAPIKeyHash: (String, retiresAt: Date)? = nil,
            previousClientSigningKey: (String, retiresAt: Date)? = nil, identityProvider: IdentityProvider? = nil
        ) async {
            self.appId = appId
            self.apiKeyHash = apiKeyHash
            self.brokerUsers = brokerUsers
            self.badgeMode = badgeMode
            self.rateLimit = rateLimit
            self.identityProvider = identityProvider
            previousAPIKey = previousAPIKeyHash.map { ($0.0, $0.retiresAt) }
            tokenKeys = await UserToken.keys(signingKey: clientSigningKey)
            if let (key, retiresAt) = previousClientSigningKey {
                previousTokenKeys = (await UserToken.keys(signingKey: key), retiresAt)
            }
        }

        /// What `apiKey` may do for this app: everything for the app's own key (or the one a rotation replaced, while
        /// its overlap lasts), a scoped key's scope, nil for any other key.
        func access(for apiKey: String, now: Date = Date()) -> APIKeyAccess? {
            if AppDirectory.keyMatches(apiKey, hash: apiKeyHash) { return .full }
            if let previous = previousAPIKey, previous.retiresAt > now, AppDirectory.keyMatches(apiKey, hash: previous.hash) { return .full }
            return scopedKeys[AppDirectory.hashAPIKey(apiKey)].map { .scoped(keyId: $0.keyId, scope: $0.scope) }
        }

        /// Checks a user token with the app's signing key, or with the one a rotation replaced while its overlap lasts.
        func verifyUserToken(_ token: String, now: Date = Date()) async throws(UserToken.Invalid) {
            do {
                try await UserToken.verify(token, with: tokenKeys)
            } catch {
                guard let previous = previousTokenKeys, previous.retiresAt > now else { throw error }
                try await UserToken.verify(token, with: previous.keys)
            }
        }

        /// Whether `user` publishes for this app: one of its broker users that has not retired by `now`.
        func acceptsBrokerUser(_ user: String, now: Date = Date()) -> Bool {
            guard let retiresAt = brokerUsers[user] else { return false }
            return retiresAt.map { $0 > now } ?? true
        }
    }

    private struct Cache {
        var apps: [String: (app: App?, loadedAt: ContinuousClock.Instant)] = [:]
        /// Counts the copies dropped: a load that began before a drop does not cache what it read.
        var drops = 0
    }

    private let source: any AppSource
    private let cache = Mutex(Cache())
    /// How long a copy serves when no announcement of a change dropped it (`AppChangeWatch`).
    private let lifetime: Duration = .seconds(30)

    init(source: some AppSource) {
        self.source = source
    }

    /// The app, or nil if there is none with that id (an unknown id is cached for a second only).
    func app(_ appId: String) async throws -> App? {
        let now = ContinuousClock.now
        if let cached = cache.withLock({ $0.apps[appId] }) {
            let age = now - cached.loadedAt
            if (cached.app != nil && age < lifetime) || age < .seconds(1) { return cached.app }
        }
        return try await load(appId, at: now)
    }

    /// The app, read again from the source when the cached one does not accept `user` (a broker user created by a
    /// rotation on another instance is accepted at once).
    func app(_ appId: String, acceptingBrokerUser user: String) async throws -> App? {
        let cached = try await app(appId)
        if cached?.acceptsBrokerUser(user) ?? true { return cached }
        return try await load(appId, at: .now)
    }

    /// The app read again when the cached copy is older than a second, so a key rotated through another instance is
    /// accepted at once, while wrong keys cost at most one query per app and second.
    func recentApp(_ appId: String) async throws -> App? {
        let now = ContinuousClock.now
        if let cached = cache.withLock({ $0.apps[appId] }), now - cached.loadedAt < .seconds(1) { return cached.app }
        return try await load(appId, at: now)
    }

    /// Drops the cached app, so the next request reads it again (it changed).
    func forget(_ appId: String) {
        cache.withLock { cache in
            cache.apps.removeValue(forKey: appId)
            cache.drops += 1
        }
    }

    /// Drops every cached app (changes may have gone unannounced).
    func forgetAll() {
        cache.withLock { cache in
            cache.apps.removeAll()
            cache.drops += 1
        }
    }

    private func load(_ appId: String, at now: ContinuousClock.Instant) async throws -> App? {
        let drops = cache.withLock { $0.drops }
        let found = try await source.app(appId)
        cache.withLock { cache in
            if cache.drops == drops { cache.apps[appId] = (found, now) }
        }
        return found
    }

    /// Checks an app server's API key against the stored hash, in constant time.
    static func keyMatches(_ apiKey: String, hash: String) -> Bool {
        let computed = Array(hashAPIKey(apiKey).utf8)
        let stored = Array(hash.utf8)
        guard computed.count == stored.count else { return false }
        return zip(computed, stored).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    static func hashAPIKey(_ apiKey: String) -> String {
        SHA256.hash(data: Array(apiKey.utf8)).lowercaseHex
    }
}

/// Where `AppDirectory` reads apps from.
protocol AppSource: Sendable {
    func app(_ appId: String) async throws -> AppDirectory.App?
}

/// The apps as stored (`AppStore`), their signing keys opened with the service's secret keys.
struct StoredAppSource: AppSource {
    let store: any AppStore
    let keyring: SecretKeyring

    func app(_ appId: String) async throws -> AppDirectory.App? {
        guard let stored = try await store.credentials(appId: appId) else { return nil }
        let purpose = SecretPurpose.clientSigningKey(appId: appId)
        var app = await AppDirectory.App(
            appId: appId, apiKeyHash: stored.apiKeyHash, clientSigningKey: try keyring.openText(stored.sealedClientSigningKey, for: purpose),
            brokerUsers: stored.brokerUsers, badgeMode: stored.badgeMode, rateLimit: stored.rateLimit,
            previousAPIKeyHash: stored.previousAPIKeyHash.map { ($0.hash, $0.retiresAt) },
            previousClientSigningKey: try stored.previousSealedClientSigningKey.map { (try keyring.openText($0.sealed, for: purpose), $0.retiresAt) },
            identityProvider: stored.identityProvider)
        app.scopedKeys = stored.scopedKeys.mapValues { ($0.keyId, $0.scope) }
        return app
    }
}
