import Crypto
import Foundation
import JWTKit
import NotifyModels
import Synchronization

/// RFC 8292 VAPID authorization: `vapid t=<ES256 JWT, signed with jwt-kit>, k=<public key>`, the JWT naming the push service's
/// origin as `aud`, expiring in 12 hours, and reused for an hour per key and origin.
final class VAPIDSigner: Sendable {
    static let lifetime: TimeInterval = 12 * 3600
    static let reuse: TimeInterval = 3600

    private struct Claims: JWTPayload {
        var aud: AudienceClaim
        var exp: ExpirationClaim
        var sub: SubjectClaim

        func verify(using _: some JWTAlgorithm) throws {}
    }

    private let cache = Mutex<[String: (authorization: String, signedAt: Date)]>([:])

    /// The `Authorization` value for pushes to `endpoint` signed with the PEM key, `sub` = `subject`.
    func authorization(privateKeyPEM: String, subject: String, endpoint: String, now: Date = Date()) async throws -> String {
        let audience = try Self.origin(of: endpoint)
        let cacheKey = "\(privateKeyPEM)\n\(subject)\n\(audience)"
        if let cached = cache.withLock({ $0[cacheKey] }), now.timeIntervalSince(cached.signedAt) < Self.reuse {
            return cached.authorization
        }
        let key = try ES256PrivateKey(pem: privateKeyPEM)
        let claims = Claims(
            aud: AudienceClaim(value: audience), exp: ExpirationClaim(value: Date(timeIntervalSince1970: (now.timeIntervalSince1970 + Self.lifetime).rounded(.down))),
            sub: SubjectClaim(value: subject))
        let token = try await JWTKeyCollection().add(ecdsa: key).sign(claims)
        let authorization = "vapid t=\(token), k=\(Base64URLCoding.encode(try P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM).publicKey.x963Representation))"
        cache.withLock { $0[cacheKey] = (authorization, now) }
        return authorization
    }

    struct InvalidEndpoint: Error {}

    /// `scheme://host[:port]` of a push endpoint URL (the port only when not the scheme's default).
    static func origin(of endpoint: String) throws -> String {
        guard let url = URLComponents(string: endpoint), let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else {
            throw InvalidEndpoint()
        }
        let port = url.port.map { ($0 == 443 && scheme == "https") || ($0 == 80 && scheme == "http") ? "" : ":\($0)" } ?? ""
        return "\(scheme)://\(host)\(port)"
    }
}
