import Crypto
import Foundation

/// Mints the HS256 user tokens ingest accepts: `sub` = userId, `aud` = appId, `exp`; the HMAC key is
/// the UTF-8 bytes of the app's `clientSigningKey`.
enum UserToken {
    static func mint(userId: String, appId: String, signingKey: String, lifetime: TimeInterval = 3600) -> String {
        struct Claims: Encodable { let sub: String; let aud: String; let exp: Int }
        let header = base64url(Data(#"{"alg":"HS256","typ":"JWT"}"#.utf8))
        let claims = Claims(sub: userId, aud: appId, exp: Int(Date().timeIntervalSince1970 + lifetime))
        // Encoding three plain fields cannot fail.
        let payload = base64url((try? JSONEncoder().encode(claims)) ?? Data())
        let input = "\(header).\(payload)"
        let signature = HMAC<SHA256>.authenticationCode(for: Data(input.utf8), using: SymmetricKey(data: Data(signingKey.utf8)))
        return "\(input).\(base64url(Data(signature)))"
    }

    static func base64url(_ data: Data) -> String {
        data.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
