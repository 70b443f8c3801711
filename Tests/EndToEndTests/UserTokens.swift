import Crypto
import Foundation

/// Mints user tokens the way an app server does: HS256 JWTs signed with the app's `clientSigningKey`
/// (its UTF-8 bytes are the HMAC key), `sub` = userId, `aud` = appId, `exp` required.
enum UserTokens {
    private struct Header: Encodable {
        var alg = "HS256"
        var typ = "JWT"
    }

    private struct Claims: Encodable {
        var sub: String
        var aud: String
        var exp: Int
    }

    /// - Parameter expiresIn: seconds from now; negative for a token that has already expired.
    static func mint(userId: String, appId: String, signingKey: String, expiresIn: TimeInterval = 3600) throws -> String {
        let encoder = JSONEncoder()
        let header = base64URL(try encoder.encode(Header()))
        let claims = base64URL(try encoder.encode(Claims(sub: userId, aud: appId, exp: Int(Date().timeIntervalSince1970 + expiresIn))))
        let signingInput = "\(header).\(claims)"
        let signature = HMAC<SHA256>.authenticationCode(for: Data(signingInput.utf8), using: SymmetricKey(data: Data(signingKey.utf8)))
        return "\(signingInput).\(base64URL(Data(signature)))"
    }

    private static func base64URL(_ data: Data) -> String {
        data.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
