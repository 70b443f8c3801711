import Foundation
import JWTKit
import NotifyModels

/// The JWT a service account signs (RS256, jwt-kit) to get an access token: Google's OAuth 2.0 JWT-bearer grant.
enum FCMAssertion {
    static let scope = "https://www.googleapis.com/auth/firebase.messaging"
    static let grantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"

    private struct Claims: JWTPayload {
        var iss: IssuerClaim
        var scope: String
        var aud: AudienceClaim
        var iat: IssuedAtClaim
        var exp: ExpirationClaim

        func verify(using _: some JWTAlgorithm) throws {}
    }

    /// An assertion valid one hour from `now`, addressed to the account's token URI, `kid` the account's key id.
    static func make(for account: FCMCredentials.ServiceAccount, now: Date = Date()) async throws -> String {
        let issuedAt = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        let kid = JWKIdentifier(string: account.privateKeyId)
        let keys = await JWTKeyCollection().add(rsa: try Insecure.RSA.PrivateKey(pem: account.privateKey), digestAlgorithm: .sha256, kid: kid)
        let claims = Claims(
            iss: IssuerClaim(value: account.clientEmail), scope: scope, aud: AudienceClaim(value: account.tokenUri),
            iat: IssuedAtClaim(value: issuedAt), exp: ExpirationClaim(value: issuedAt.addingTimeInterval(3600)))
        return try await keys.sign(claims, kid: kid)
    }
}
