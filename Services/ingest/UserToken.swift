import Crypto
import Foundation

/// User tokens: HS256 JWTs an app server mints for its user with the app's clientSigningKey
/// (its UTF-8 bytes are the HMAC key); `sub` = userId, `aud` = appId, `exp` required.
enum UserToken {
    struct Invalid: Error {
        var message: String
    }

    struct Claims: Sendable {
        var subject: String
        var appId: String
        var expiresAt: Date
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
    static func unverifiedClaims(_ token: String) throws(Invalid) -> Claims {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw Invalid(message: "a JWT has three dot-separated parts") }
        guard let headerData = decodeSegment(parts[0]), let header = try? JSONDecoder().decode(Header.self, from: headerData) else {
            throw Invalid(message: "the header is not base64url JSON")
        }
        guard header.alg == "HS256" else { throw Invalid(message: "alg must be HS256") }
        guard let payloadData = decodeSegment(parts[1]), let payload = try? JSONDecoder().decode(Payload.self, from: payloadData) else {
            throw Invalid(message: "the payload is not base64url JSON")
        }
        guard let subject = payload.sub, !subject.isEmpty else { throw Invalid(message: "sub (the user id) is required") }
        guard let appId = payload.aud?.first else { throw Invalid(message: "aud (the app id) is required") }
        guard let exp = payload.exp else { throw Invalid(message: "exp is required") }
        return Claims(subject: subject, appId: appId, expiresAt: Date(timeIntervalSince1970: exp))
    }

    static func verify(_ token: String, claims: Claims, signingKey: String, now: Date) throws(Invalid) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let signature = decodeSegment(parts[2]) else { throw Invalid(message: "the signature is not base64url") }
        let signingInput = Data("\(parts[0]).\(parts[1])".utf8)
        let key = SymmetricKey(data: Data(signingKey.utf8))
        guard HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: signingInput, using: key) else {
            throw Invalid(message: "the signature does not match the app's client signing key")
        }
        guard claims.expiresAt.addingTimeInterval(60) > now else { throw Invalid(message: "the token has expired") }
    }

    static func decodeSegment(_ segment: Substring) -> Data? {
        var text = segment.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        return Data(base64Encoded: text)
    }

}
