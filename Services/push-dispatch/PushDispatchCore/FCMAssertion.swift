import Foundation
import NotifyModels
import _CryptoExtras

/// The JWT a service account signs (RS256) to get an access token: Google's OAuth 2.0 JWT-bearer grant.
enum FCMAssertion {
    static let scope = "https://www.googleapis.com/auth/firebase.messaging"
    static let grantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"

    private struct Header: Encodable {
        var alg = "RS256"
        var typ = "JWT"
        var kid: String
    }

    private struct Claims: Encodable {
        var iss: String
        var scope: String
        var aud: String
        var iat: Int
        var exp: Int
    }

    /// An assertion valid one hour from `now`, addressed to the account's token URI.
    static func make(for account: FCMCredentials.ServiceAccount, now: Date = Date()) throws -> String {
        let key = try _RSA.Signing.PrivateKey(pemRepresentation: account.privateKey)
        let issuedAt = Int(now.timeIntervalSince1970)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        let signingInput = JSONWebToken.signingInput(
            header: try encoder.encode(Header(kid: account.privateKeyId)),
            claims: try encoder.encode(Claims(iss: account.clientEmail, scope: scope, aud: account.tokenUri, iat: issuedAt, exp: issuedAt + 3600)))
        let signature = try key.signature(for: Data(signingInput.utf8), padding: .insecurePKCS1v1_5)
        return "\(signingInput).\(Base64URLCoding.encode(signature.rawRepresentation))"
    }
}
