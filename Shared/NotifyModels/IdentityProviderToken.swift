import Foundation
import JWTKit

/// User tokens an app's identity provider signs (OpenID Connect ID tokens, RS256 or ES256): read, their claims
/// checked against the app's `IdentityProvider` (`iss`, `aud`, `exp`, `nbf`, with `UserToken.clockSkew` of leeway),
/// their signature checked with the provider's keys (jwt-kit), and the user id taken from the app's claim. No I/O:
/// ingest fetches the keys.
public enum IdentityProviderToken {
    /// The signature algorithms taken: RSA PKCS#1 v1.5 and ECDSA P-256, both with SHA-256.
    public static let algorithms: Set<String> = ["RS256", "ES256"]

    /// A token's header and claims, before its signature is checked.
    public struct Unverified: Sendable {
        public var algorithm: String
        /// The key the provider says it signed with (`kid`); nil when the header names none.
        public var keyId: String?
        public var claims: Claims
    }

    /// Every claim of the token, as JSON values: the user id's claim is the app's choice.
    public struct Claims: JWTPayload, Equatable {
        public var values: [String: JSONValue]

        public init(_ values: [String: JSONValue]) {
            self.values = values
        }

        public init(from decoder: any Decoder) throws {
            values = try decoder.singleValueContainer().decode([String: JSONValue].self)
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(values)
        }

        /// The claims are checked against the app's provider by `check`, which knows it.
        public func verify(using _: some JWTAlgorithm) throws {}

        var issuer: String? { string("iss") }
        /// `aud`, one string or an array of them.
        var audiences: [String] {
            switch values["aud"] {
            case .string(let audience): [audience]
            case .array(let audiences): audiences.compactMap { if case .string(let audience) = $0 { audience } else { nil } }
            default: []
            }
        }

        func string(_ claim: String) -> String? {
            if case .string(let value) = values[claim] { value } else { nil }
        }

        /// A NumericDate claim (seconds since 1970).
        func date(_ claim: String) -> Date? {
            if case .number(let seconds) = values[claim] { Date(timeIntervalSince1970: seconds) } else { nil }
        }
    }

    /// The header and claims, and whether the algorithm is one taken; the signature is not checked.
    public static func read(_ token: String) throws(UserToken.Invalid) -> Unverified {
        let header: JWTHeader
        let claims: Claims
        do {
            (header, claims, _) = try DefaultJWTParser().parse(Array(token.utf8), as: Claims.self)
        } catch {
            throw UserToken.Invalid(message: "a JWT has three dot-separated base64url parts, a JSON header and payload")
        }
        guard let algorithm = header.alg, algorithms.contains(algorithm) else {
            throw UserToken.Invalid(message: "an identity provider's token is signed RS256 or ES256")
        }
        return Unverified(algorithm: algorithm, keyId: header.kid, claims: claims)
    }

    /// Checks `iss`, `aud`, `exp` and `nbf` against the app's provider at `now` (with `UserToken.clockSkew`), and
    /// answers the user id, the app's claim, a string of 1 to 256 bytes.
    public static func check(_ claims: Claims, against provider: IdentityProvider, now: Date = Date()) throws(UserToken.Invalid) -> String {
        guard claims.issuer == provider.issuer else {
            throw UserToken.Invalid(message: "iss is not the app's identity provider (\(provider.issuer))")
        }
        guard claims.audiences.contains(provider.audience) else {
            throw UserToken.Invalid(message: "aud does not name the app's audience at its identity provider")
        }
        guard let expiresAt = claims.date("exp") else { throw UserToken.Invalid(message: "exp is required") }
        guard expiresAt.addingTimeInterval(UserToken.clockSkew) > now else { throw UserToken.Invalid(message: "the token has expired") }
        if claims.values["nbf"] != nil {
            guard let notBefore = claims.date("nbf") else { throw UserToken.Invalid(message: "nbf must be a NumericDate") }
            guard notBefore.addingTimeInterval(-UserToken.clockSkew) <= now else { throw UserToken.Invalid(message: "the token is not valid yet (nbf)") }
        }
        guard let userId = claims.string(provider.userIdClaim), !userId.isEmpty, userId.utf8.count <= 256 else {
            throw UserToken.Invalid(message: "the claim \(provider.userIdClaim) (the user id) must be a string of 1 to 256 bytes")
        }
        return userId
    }

    /// Checks the token's signature with the provider's `keys`, chosen by its `kid` (which the caller made sure `keys`
    /// holds, or that it has none and `keys` holds one key).
    public static func verifySignature(_ token: String, with keys: JWTKeyCollection) async throws(UserToken.Invalid) {
        do {
            _ = try await keys.verify(token, as: Claims.self)
        } catch let error as JWTError where error.errorType == .signatureVerificationFailed {
            throw UserToken.Invalid(message: "the signature does not match the identity provider's key")
        } catch {
            throw UserToken.Invalid(message: "the token could not be checked with the identity provider's key")
        }
    }
}
