import Crypto
import Foundation
import JWTKit
import Logging
import NotifyJSON
import NotifyModels
import PostgresNIO
import Synchronization

/// Apps as ingest needs them (key hash, signing key, broker user), read from a source (PostgreSQL through the
/// read-only role) and cached briefly so that authenticating a request costs no query.
final class AppDirectory: Sendable {
    struct App: Sendable {
        var appId: String
        var apiKeyHash: String
        var brokerUser: String?
        /// The app's client signing key, as jwt-kit checks user tokens with it.
        var tokenKeys: JWTKeyCollection

        init(appId: String, apiKeyHash: String, clientSigningKey: String, brokerUser: String?) async {
            self.appId = appId
            self.apiKeyHash = apiKeyHash
            self.brokerUser = brokerUser
            tokenKeys = await UserToken.keys(signingKey: clientSigningKey)
        }
    }

    private let source: any AppSource
    private let cache = Mutex<[String: (app: App?, loadedAt: ContinuousClock.Instant)]>([:])
    private let lifetime: Duration = .seconds(30)

    init(source: some AppSource) {
        self.source = source
    }

    /// The app, or nil if there is none with that id (an unknown id is cached for a second only).
    func app(_ appId: String) async throws -> App? {
        let now = ContinuousClock.now
        if let cached = cache.withLock({ $0[appId] }) {
            let age = now - cached.loadedAt
            if (cached.app != nil && age < lifetime) || age < .seconds(1) { return cached.app }
        }
        let found = try await source.app(appId)
        cache.withLock { $0[appId] = (found, now) }
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

/// The apps table, through the read-only role.
struct PostgresAppSource: AppSource {
    let client: PostgresClient
    let logger: Logger

    func app(_ appId: String) async throws -> AppDirectory.App? {
        let rows = try await client.query(
            "SELECT app_id, api_key_hash, client_signing_key, broker_user FROM apps WHERE app_id = \(appId)", logger: logger)
        var found: (id: String, hash: String, key: String, brokerUser: String?)?
        for try await row in rows.decode((String, String, String, String?).self) { found = row }
        guard let found else { return nil }
        return await AppDirectory.App(appId: found.id, apiKeyHash: found.hash, clientSigningKey: found.key, brokerUser: found.brokerUser)
    }
}
