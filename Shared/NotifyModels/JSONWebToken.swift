import Crypto
import Foundation

/// Compact JSON Web Tokens (RFC 7519) as this project signs and checks them: the header and claims are
/// JSON texts the caller writes, each segment base64url without padding.
public enum JSONWebToken {
    /// `base64url(header).base64url(claims)`: the part a signature covers.
    public static func signingInput(header: some DataProtocol, claims: some DataProtocol) -> String {
        "\(Base64URLCoding.encode(header)).\(Base64URLCoding.encode(claims))"
    }

    /// An ES256 token (APNs provider tokens, VAPID): the signature is the raw 64-byte r‖s.
    public static func signES256(header: String, claims: String, key: P256.Signing.PrivateKey) throws -> String {
        let input = signingInput(header: Data(header.utf8), claims: Data(claims.utf8))
        let signature = try key.signature(for: Data(input.utf8))
        return "\(input).\(Base64URLCoding.encode(signature.rawRepresentation))"
    }

    /// An HS256 token (user tokens).
    public static func signHS256(header: String, claims: String, key: SymmetricKey) -> String {
        let input = signingInput(header: Data(header.utf8), claims: Data(claims.utf8))
        let signature = HMAC<SHA256>.authenticationCode(for: Data(input.utf8), using: key)
        return "\(input).\(Base64URLCoding.encode(Data(signature)))"
    }

    /// The three segments of `token`, or nil if it does not have exactly three.
    public static func segments(_ token: String) -> (header: Substring, claims: Substring, signature: Substring)? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        return (parts[0], parts[1], parts[2])
    }
}
