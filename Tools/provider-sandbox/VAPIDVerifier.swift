import Crypto
import Foundation

/// Checks RFC 8292 VAPID authorization, `Authorization: vapid t=<ES256 JWT>, k=<public key>`: the
/// signature by `k`, `aud` the push service's origin, `exp` in the next 24 hours, and `sub` present.
struct VAPIDVerifier: Sendable {
    /// Longest `exp` ahead of now RFC 8292 allows, in seconds.
    private static let maximumLifetime = 24 * 60 * 60
    private static let clockSkew = 60

    private struct Header: Decodable {
        let alg: String?
    }

    private struct Claims: Decodable {
        let aud: String?
        let exp: Int?
        let sub: String?
    }

    /// The push service's origin (scheme://host:port), the audience every JWT must name.
    let audience: String

    /// Verifies the header value and answers the application server key `k` (uncompressed point).
    func verify(authorization: String?) throws(WebPushError) -> Data {
        guard let authorization, let space = authorization.firstIndex(of: " "),
            authorization[..<space].lowercased() == "vapid"
        else { throw .unauthorized("expected the vapid scheme") }
        var parameters: [String: String] = [:]
        for parameter in authorization[space...].split(separator: ",") {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            if pair.count == 2 {
                let name = pair[0].trimmingCharacters(in: .whitespaces).lowercased()
                parameters[name] = pair[1].trimmingCharacters(in: .whitespaces)
            }
        }
        guard let rawKey = parameters["k"].flatMap({ Base64URL.decode($0) }),
            let publicKey = try? P256.Signing.PublicKey(x963Representation: rawKey)
        else { throw .unauthorized("k must be an uncompressed P-256 public key, base64url") }
        guard let jwt = parameters["t"].flatMap({ CompactJWT($0) }), let header = jwt.header(as: Header.self),
            let claims = jwt.claims(as: Claims.self)
        else { throw .unauthorized("t must be a JWT") }
        guard header.alg == "ES256",
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: jwt.signature),
            publicKey.isValidSignature(signature, for: jwt.signingInput)
        else { throw .unauthorized("the ES256 signature does not verify with k") }
        guard claims.aud == audience else { throw .unauthorized("aud must be \(audience)") }
        let now = Int(Date.now.timeIntervalSince1970)
        guard let expiry = claims.exp, expiry > now, expiry <= now + Self.maximumLifetime + Self.clockSkew else {
            throw .unauthorized("exp must be within the next 24 hours")
        }
        guard let subject = claims.sub, !subject.isEmpty else { throw .unauthorized("sub is required") }
        return rawKey
    }
}
