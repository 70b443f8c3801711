import Foundation
import JWTKit
import NotifyModels
import Testing

/// An identity provider's tokens: which signer a token names, its claims checked against the app's provider, and its
/// signature checked with the provider's key.
@Suite struct IdentityProviderTokenTests {
    private let provider = IdentityProvider(issuer: "https://idp.notify.test/tenant", audience: "ios-client")
    private let now = Date(timeIntervalSince1970: 1_900_000_000)

    private func claims(_ values: [String: JSONValue]) -> IdentityProviderToken.Claims {
        var all: [String: JSONValue] = [
            "iss": .string(provider.issuer), "aud": .string(provider.audience), "sub": .string("alice"),
            "exp": .number(now.timeIntervalSince1970 + 300),
        ]
        all.merge(values) { $1 }
        return IdentityProviderToken.Claims(all.filter { $0.value != .null })
    }

    private func refusal(_ claims: IdentityProviderToken.Claims, against provider: IdentityProvider? = nil) -> String? {
        do {
            _ = try IdentityProviderToken.check(claims, against: provider ?? self.provider, now: now)
            return nil
        } catch {
            return error.message
        }
    }

    /// A provider key (ES256) under `kid`, signing `claims`.
    private static func token(_ claims: IdentityProviderToken.Claims, key: ES256PrivateKey, kid: String) async throws -> String {
        try await JWTKeyCollection().add(ecdsa: key, kid: JWKIdentifier(string: kid)).sign(claims, kid: JWKIdentifier(string: kid))
    }

    @Test("the header's alg says who signed: HS256 the app, RS256 or ES256 its identity provider; any other is refused")
    func signerByAlgorithm() async throws {
        let appToken = try await UserToken.mint(userId: "alice", appId: "app_x", signingKey: "c2lnbmluZy1rZXktb2YtdGhlLXRlc3QtYXBw")
        #expect(try UserToken.signer(of: appToken) == .app)
        let providerToken = try await Self.token(claims([:]), key: ES256PrivateKey(), kid: "k1")
        #expect(try UserToken.signer(of: providerToken) == .identityProvider)
        let unsigned = try await JWTKeyCollection().add(hmac: HMACKey(from: String(repeating: "k", count: 64)), digestAlgorithm: .sha512)
            .sign(claims([:]))
        #expect(throws: UserToken.Invalid.self) { try UserToken.signer(of: unsigned) }
        #expect(throws: UserToken.Invalid.self) { try UserToken.signer(of: "not.a.jwt") }
    }

    @Test("iss, aud (a string or one of several), exp and nbf are checked with 60 s of leeway; the user id is the app's claim")
    func claimsAreChecked() throws {
        #expect(try IdentityProviderToken.check(claims([:]), against: provider, now: now) == "alice")
        #expect(try IdentityProviderToken.check(
            claims(["aud": .array([.string("web"), .string("ios-client")])]), against: provider, now: now) == "alice")
        var byEmail = provider
        byEmail.userIdClaim = "email"
        #expect(try IdentityProviderToken.check(claims(["email": .string("a@example.com")]), against: byEmail, now: now) == "a@example.com")
        #expect(refusal(claims([:]), against: byEmail)?.contains("email") == true, "no email claim")

        #expect(refusal(claims(["iss": .string("https://idp.notify.test/other")]))?.contains("iss") == true)
        #expect(refusal(claims(["aud": .string("web")]))?.contains("aud") == true)
        #expect(refusal(claims(["aud": .null]))?.contains("aud") == true)
        #expect(refusal(claims(["exp": .null])) == "exp is required")
        #expect(refusal(claims(["exp": .number(now.timeIntervalSince1970 - 30)])) == nil, "expired within the leeway")
        #expect(refusal(claims(["exp": .number(now.timeIntervalSince1970 - 90)])) == "the token has expired")
        #expect(refusal(claims(["nbf": .number(now.timeIntervalSince1970 + 30)])) == nil, "valid soon, within the leeway")
        #expect(refusal(claims(["nbf": .number(now.timeIntervalSince1970 + 90)]))?.contains("nbf") == true)
        #expect(refusal(claims(["sub": .number(7)]))?.contains("sub") == true, "a user id that is not a string")
        #expect(refusal(claims(["sub": .string(String(repeating: "u", count: 257))]))?.contains("sub") == true)
    }

    @Test("the signature is checked with the provider's key: another key's signature under the same kid is refused")
    func signatureIsChecked() async throws {
        let key = ES256PrivateKey()
        let parameters = try #require(key.parameters)
        let jwk = try JSONDecoder().decode(JWK.self, from: Data(#"{"kty":"EC","crv":"P-256","kid":"k1","x":"\#(parameters.x)","y":"\#(parameters.y)"}"#.utf8))
        let providerKeys = try await JWTKeyCollection().add(jwk: jwk)

        let genuine = try await Self.token(claims([:]), key: key, kid: "k1")
        try await IdentityProviderToken.verifySignature(genuine, with: providerKeys)
        let forged = try await Self.token(claims([:]), key: ES256PrivateKey(), kid: "k1")
        await #expect(throws: UserToken.Invalid.self) { try await IdentityProviderToken.verifySignature(forged, with: providerKeys) }
        let read = try IdentityProviderToken.read(genuine)
        #expect(read.algorithm == "ES256" && read.keyId == "k1" && read.claims == claims([:]))
    }
}
