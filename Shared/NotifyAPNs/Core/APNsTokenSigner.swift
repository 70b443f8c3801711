import Foundation
import JWTKit
import Synchronization

/// Makes and caches APNs provider tokens: ES256 JWTs signed with the app's .p8 key (jwt-kit), `kid` the key id,
/// `iss` the team id, `iat` the time of signing.
///
/// Apple rejects tokens older than an hour and answers TooManyProviderTokenUpdates when a token
/// changes more often than every 20 minutes, so a token is reused for 50 minutes, then replaced.
public final class APNsTokenSigner: Sendable {
    struct Token: Sendable {
        var value: String
        var issuedAt: Date
    }

    private struct Claims: JWTPayload {
        var iss: IssuerClaim
        var iat: IssuedAtClaim

        func verify(using _: some JWTAlgorithm) throws {}
    }

    static let lifetime: TimeInterval = 50 * 60
    /// Apple: update the provider token no more than once every 20 minutes.
    static let minimumAgeForRefresh: TimeInterval = 20 * 60

    fileprivate let cache = Mutex<[String: Token]>([:])

    public init() {}

    /// The current token for this key, signing a new one when the cached one is 50 minutes old.
    public func token(teamId: String, keyId: String, privateKeyPEM: String, now: Date = Date()) async throws -> String {
        let cacheKey = "\(teamId).\(keyId)"
        if let cached = cache.withLock({ $0[cacheKey] }), now.timeIntervalSince(cached.issuedAt) < Self.lifetime {
            return cached.value
        }
        // Whole seconds: Apple reads `iat` as an integer.
        let issuedAt = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        let kid = JWKIdentifier(string: keyId)
        let keys = await JWTKeyCollection().add(ecdsa: try ES256PrivateKey(pem: privateKeyPEM), kid: kid)
        let value = try await keys.sign(Claims(iss: IssuerClaim(value: teamId), iat: IssuedAtClaim(value: issuedAt)), kid: kid)
        cache.withLock { $0[cacheKey] = Token(value: value, issuedAt: issuedAt) }
        return value
    }
}

extension APNsTokenSigner {
    /// Drops the cached token so the next push signs a new one, if the cached one is at least 20 minutes old.
    /// Returns whether it did (a younger token is not replaced: APNs would refuse the update, and a fresh
    /// token refused is a key problem that a new token does not fix).
    public func invalidate(teamId: String, keyId: String, now: Date = Date()) -> Bool {
        cache.withLock { cache in
            let key = "\(teamId).\(keyId)"
            guard let token = cache[key], now.timeIntervalSince(token.issuedAt) >= Self.minimumAgeForRefresh else { return false }
            cache[key] = nil
            return true
        }
    }
}
