import Crypto
import Foundation
import Synchronization

/// A provider token that passed verification, and the key that signed it.
struct ProviderToken: Sendable {
    let jwt: String
    let key: APNsKey
    let issuedAt: Int
}

/// Checks APNs provider tokens (ES256 JWTs) against the registered keys the way APNs does.
///
/// Signature checks are cached per token text (a provider reuses one token for many pushes);
/// the cache remembers which public key verified a token, so replacing a key invalidates it.
final class ProviderTokenVerifier: Sendable {
    /// How long APNs accepts a token after its `iat`, in seconds.
    static let tokenLifetime = 3600

    private struct Header: Decodable {
        let alg: String?
        let kid: String?
    }

    private struct Claims: Decodable {
        let iss: String?
        let iat: Int?
    }

    /// A token whose signature was checked, with the public key that verified it.
    private struct SignedToken {
        let keyId: String
        let issuer: String
        let issuedAt: Int
        let publicKey: Data
    }

    private static let cacheCapacity = 10_000

    private let keys: KeyRegistry
    private let cache = Mutex<[String: SignedToken]>([:])

    init(keys: KeyRegistry) {
        self.keys = keys
    }

    /// Verifies the value of an `authorization` header (`bearer <JWT>`).
    func verify(authorization: String?) throws(APNsError) -> ProviderToken {
        guard let authorization, !authorization.isEmpty else { throw .missingProviderToken }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.first?.lowercased() == "bearer" else { throw .invalidProviderToken }
        guard parts.count == 2 else { throw .missingProviderToken }
        let jwt = String(parts[1])
        let signed = try signedToken(jwt)
        guard let key = keys.key(id: signed.keyId), key.rawPublicKey == signed.publicKey,
            signed.issuer == key.teamId
        else { throw .invalidProviderToken }
        guard Int(Date.now.timeIntervalSince1970) - signed.issuedAt <= Self.tokenLifetime else {
            throw .expiredProviderToken
        }
        return ProviderToken(jwt: jwt, key: key, issuedAt: signed.issuedAt)
    }

    /// Decodes `jwt` and checks its ES256 signature (raw r||s) over `header.payload`.
    private func signedToken(_ jwt: String) throws(APNsError) -> SignedToken {
        if let cached = cache.withLock({ $0[jwt] }) { return cached }
        guard let token = CompactJWT(jwt),
            let header = token.header(as: Header.self), header.alg == "ES256", let keyId = header.kid,
            let claims = token.claims(as: Claims.self), let issuer = claims.iss, let issuedAt = claims.iat,
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: token.signature),
            let key = keys.key(id: keyId), let publicKey = try? key.publicKey(),
            publicKey.isValidSignature(signature, for: token.signingInput)
        else { throw .invalidProviderToken }
        let signed = SignedToken(keyId: keyId, issuer: issuer, issuedAt: issuedAt, publicKey: key.rawPublicKey)
        cache.withLock { cache in
            if cache.count >= Self.cacheCapacity { cache.removeAll() }
            cache[jwt] = signed
        }
        return signed
    }
}
