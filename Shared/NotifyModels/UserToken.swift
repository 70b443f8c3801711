import Foundation
import JWTKit

/// User tokens: HS256 JWTs an app server mints for its user with the app's `clientSigningKey` (its UTF-8 bytes are
/// the HMAC key); `sub` = userId, `aud` = appId, `exp` required, 60 seconds of clock skew allowed. Signed and checked
/// with jwt-kit. An app with an identity provider also takes the provider's tokens (`IdentityProviderToken`).
public enum UserToken {
    /// Who signed a token, by its header's `alg`.
    public enum Signer: Sendable, Equatable {
        /// HS256: the app's server, with its client signing key.
        case app
        /// RS256 or ES256: the app's identity provider.
        case identityProvider
    }

    /// Why a token is refused (the message names the claim or part that is wrong).
    public struct Invalid: Error, Sendable {
        public var message: String
    }

    /// How far past `exp` a token is still taken: the clocks of the app server and this service may differ.
    public static let clockSkew: TimeInterval = 60

    /// What a token says. Every claim is optional as read, so that a missing one is named (jwt-kit would only say the
    /// payload did not decode); `claims(_:)` and `verify` require them.
    public struct Claims: JWTPayload {
        var sub: SubjectClaim?
        var aud: AudienceClaim?
        var exp: ExpirationClaim?

        /// The user id.
        public var subject: String { sub?.value ?? "" }
        /// The app id, the first audience.
        public var appId: String { aud?.value.first ?? "" }

        public func verify(using _: some JWTAlgorithm) throws {
            guard let exp else { throw JWTError.claimVerificationFailure(failedClaim: nil, reason: "exp is required") }
            try exp.verifyNotExpired(currentDate: Date().addingTimeInterval(-UserToken.clockSkew))
        }
    }

    /// The keys that sign and check the tokens of an app with this client signing key (ingest makes every app's key
    /// 32 random bytes, base64url: jwt-kit asks for at least the 32 bytes of SHA-256's output).
    public static func keys(signingKey: String) async -> JWTKeyCollection {
        await JWTKeyCollection().add(hmac: HMACKey(from: signingKey), digestAlgorithm: .sha256)
    }

    /// A token for `userId` of `appId`, valid for `lifetime` seconds (negative: already expired).
    public static func mint(userId: String, appId: String, signingKey: String, lifetime: TimeInterval = 3600) async throws -> String {
        let claims = Claims(
            sub: SubjectClaim(value: userId), aud: AudienceClaim(value: appId),
            exp: ExpirationClaim(value: Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + lifetime).rounded(.down))))
        return try await keys(signingKey: signingKey).sign(claims)
    }

    /// Who signed the token, read from its header before anything is checked.
    public static func signer(of token: String) throws(Invalid) -> Signer {
        let header: JWTHeader
        do {
            (header, _, _) = try DefaultJWTParser().parse(Array(token.utf8), as: IdentityProviderToken.Claims.self)
        } catch {
            throw Invalid(message: "a JWT has three dot-separated base64url parts, a JSON header and payload")
        }
        switch header.alg {
        case "HS256": return .app
        case let algorithm? where IdentityProviderToken.algorithms.contains(algorithm): return .identityProvider
        default: throw Invalid(message: "alg must be HS256 (the app's client signing key), or RS256 or ES256 (the app's identity provider)")
        }
    }

    /// The claims before the signature is checked (the audience says which app's keys check it).
    public static func unverifiedClaims(_ token: String) throws(Invalid) -> Claims {
        let header: JWTHeader
        let claims: Claims
        do {
            (header, claims, _) = try DefaultJWTParser().parse(Array(token.utf8), as: Claims.self)
        } catch {
            throw Invalid(message: "a JWT has three dot-separated base64url parts, a JSON header and payload")
        }
        guard header.alg == "HS256" else { throw Invalid(message: "alg must be HS256") }
        guard !claims.subject.isEmpty else { throw Invalid(message: "sub (the user id) is required") }
        guard !claims.appId.isEmpty else { throw Invalid(message: "aud (the app id) is required") }
        guard claims.exp != nil else { throw Invalid(message: "exp is required") }
        return claims
    }

    /// Checks the token's signature with the app's `keys` and that it has not expired.
    public static func verify(_ token: String, with keys: JWTKeyCollection) async throws(Invalid) {
        do {
            _ = try await keys.verify(token, as: Claims.self)
        } catch let error as JWTError where error.errorType == .signatureVerificationFailed {
            throw Invalid(message: "the signature does not match the app's client signing key")
        } catch let error as JWTError where error.errorType == .claimVerificationFailure {
            throw Invalid(message: error.failedClaim is ExpirationClaim ? "the token has expired" : error.reason ?? "a claim is not valid")
        } catch {
            throw Invalid(message: "the token could not be checked: \(error)")
        }
    }
}
