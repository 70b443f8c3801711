import Crypto
import Foundation

/// User tokens: HS256 JWTs an app server mints for its user with the app's `clientSigningKey`
/// (its UTF-8 bytes are the HMAC key); `sub` = userId, `aud` = appId, `exp` required.
public enum UserToken {
    /// Why a token is refused (the message names the claim or part that is wrong).
    public struct Invalid: Error, Sendable {
        public var message: String
    }

    /// What a token says, checked or not yet.
    public struct Claims: Sendable {
        public var subject: String
        public var appId: String
        public var expiresAt: Date
    }

    /// A token for `userId` of `appId`, valid for `lifetime` seconds (negative: already expired).
    public static func mint(userId: String, appId: String, signingKey: String, lifetime: TimeInterval = 3600) -> String {
        var claims = JSONWriter(capacity: 128)
        claims.beginObject()
        claims.key("sub"); claims.string(userId)
        claims.key("aud"); claims.string(appId)
        claims.key("exp"); claims.integer(Int64(Date().timeIntervalSince1970 + lifetime))
        claims.endObject()
        return JSONWebToken.signHS256(
            header: #"{"alg":"HS256","typ":"JWT"}"#, claims: String(decoding: claims.bytes, as: UTF8.self),
            key: SymmetricKey(data: Data(signingKey.utf8)))
    }

    private struct Header: Decodable {
        var alg: String
    }

    private struct Payload: Decodable {
        var sub: String?
        var aud: Audience?
        var exp: Double?
    }

    private enum Audience: Decodable {
        case one(String)
        case many([String])

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let one = try? container.decode(String.self) {
                self = .one(one)
            } else {
                self = .many(try container.decode([String].self))
            }
        }

        var first: String? {
            switch self {
            case .one(let value): return value
            case .many(let values): return values.first
            }
        }
    }

    /// The claims, before the signature is checked (the audience says which app's key verifies it).
    public static func unverifiedClaims(_ token: String) throws(Invalid) -> Claims {
        guard let segments = JSONWebToken.segments(token) else { throw Invalid(message: "a JWT has three dot-separated parts") }
        guard let headerData = Base64URLCoding.decode(String(segments.header)),
            let header = try? JSONDecoder().decode(Header.self, from: headerData)
        else {
            throw Invalid(message: "the header is not base64url JSON")
        }
        guard header.alg == "HS256" else { throw Invalid(message: "alg must be HS256") }
        guard let payloadData = Base64URLCoding.decode(String(segments.claims)),
            let payload = try? JSONDecoder().decode(Payload.self, from: payloadData)
        else {
            throw Invalid(message: "the payload is not base64url JSON")
        }
        guard let subject = payload.sub, !subject.isEmpty else { throw Invalid(message: "sub (the user id) is required") }
        guard let appId = payload.aud?.first else { throw Invalid(message: "aud (the app id) is required") }
        guard let exp = payload.exp else { throw Invalid(message: "exp is required") }
        return Claims(subject: subject, appId: appId, expiresAt: Date(timeIntervalSince1970: exp))
    }

    /// Checks the signature with the app's key, and that the token has not expired (60 s of clock skew allowed).
    public static func verify(_ token: String, claims: Claims, signingKey: String, now: Date) throws(Invalid) {
        guard let segments = JSONWebToken.segments(token), let signature = Base64URLCoding.decode(String(segments.signature)) else {
            throw Invalid(message: "the signature is not base64url")
        }
        let signingInput = Data("\(segments.header).\(segments.claims)".utf8)
        guard HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: signingInput, using: SymmetricKey(data: Data(signingKey.utf8))) else {
            throw Invalid(message: "the signature does not match the app's client signing key")
        }
        guard claims.expiresAt.addingTimeInterval(60) > now else { throw Invalid(message: "the token has expired") }
    }
}
