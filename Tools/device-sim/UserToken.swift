import Foundation

/// Mints the HS256 user token ingest accepts (`sub` = userId, `aud` = appId, `exp`), signed with the
/// UTF-8 bytes of the app's clientSigningKey. Real apps get this token from their app server.
enum UserToken {
    static func mint(userId: String, appId: String, signingKey: String, lifetime: TimeInterval = 3600) throws -> String {
        struct Claims: Encodable { let sub: String; let aud: String; let exp: Int }
        let header = base64url(Data(#"{"alg":"HS256","typ":"JWT"}"#.utf8))
        let payload = base64url(try JSONEncoder().encode(Claims(sub: userId, aud: appId, exp: Int(Date().timeIntervalSince1970 + lifetime))))
        let input = "\(header).\(payload)"
        let signature = HMACSHA256.authenticationCode(for: Array(input.utf8), key: Array(signingKey.utf8))
        return "\(input).\(base64url(Data(signature)))"
    }

    private static func base64url(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
