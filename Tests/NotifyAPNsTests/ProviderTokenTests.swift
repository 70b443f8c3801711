import Crypto
import Foundation
import Testing

@testable import NotifyAPNs
@testable import NotifyAPNsCore

/// The APNs provider token: reused for 50 minutes, refreshed on a refusal only if at least 20 minutes old
/// (Apple answers TooManyProviderTokenUpdates to more frequent changes).
@Suite("APNs provider token refresh")
struct ProviderTokenTests {
    let key = P256.Signing.PrivateKey().pemRepresentation
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    @Test("a refused token younger than 20 minutes is kept: the refusal is the key's, and the credentials get flagged")
    func youngTokenIsNotRefreshed() async throws {
        let signer = APNsTokenSigner()
        let first = try await signer.token(teamId: "TEAM", keyId: "KEY", privateKeyPEM: key, now: start)
        #expect(!signer.invalidate(teamId: "TEAM", keyId: "KEY", now: start.addingTimeInterval(19 * 60)))
        #expect(try await signer.token(teamId: "TEAM", keyId: "KEY", privateKeyPEM: key, now: start.addingTimeInterval(19 * 60)) == first)
    }

    @Test("a refused token 20 minutes old is refreshed once: a new token with a new iat")
    func oldTokenIsRefreshedOnce() async throws {
        let signer = APNsTokenSigner()
        let first = try await signer.token(teamId: "TEAM", keyId: "KEY", privateKeyPEM: key, now: start)
        let later = start.addingTimeInterval(20 * 60)
        #expect(signer.invalidate(teamId: "TEAM", keyId: "KEY", now: later))
        let second = try await signer.token(teamId: "TEAM", keyId: "KEY", privateKeyPEM: key, now: later)
        #expect(second != first)
        #expect(try claims(of: second)["iat"] as? Int == Int(later.timeIntervalSince1970))
        // Refused again at once: the new token is young, so no second refresh.
        #expect(!signer.invalidate(teamId: "TEAM", keyId: "KEY", now: later.addingTimeInterval(1)))
    }

    @Test("an unrefused token is replaced after 50 minutes, never sooner")
    func tokenLifetime() async throws {
        let signer = APNsTokenSigner()
        let first = try await signer.token(teamId: "TEAM", keyId: "KEY", privateKeyPEM: key, now: start)
        #expect(try await signer.token(teamId: "TEAM", keyId: "KEY", privateKeyPEM: key, now: start.addingTimeInterval(49 * 60)) == first)
        #expect(try await signer.token(teamId: "TEAM", keyId: "KEY", privateKeyPEM: key, now: start.addingTimeInterval(50 * 60)) != first)
    }

    @Test("the token is an ES256 JWT whose signature verifies with the key's public half")
    func tokenVerifies() async throws {
        let privateKey = P256.Signing.PrivateKey()
        let token = try await APNsTokenSigner().token(teamId: "TEAM", keyId: "KEY", privateKeyPEM: privateKey.pemRepresentation, now: start)
        let parts = token.split(separator: ".").map(String.init)
        #expect(parts.count == 3)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(base64URLDecode(parts[2])))
        #expect(privateKey.publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8)))
        #expect(try claims(of: token)["iss"] as? String == "TEAM")
        let headerJSON = try #require(base64URLDecode(parts[0]))
        let header = try #require(try JSONSerialization.jsonObject(with: headerJSON) as? [String: Any])
        #expect(header["alg"] as? String == "ES256")
        #expect(header["kid"] as? String == "KEY")
    }

    private func claims(of token: String) throws -> [String: Any] {
        let segment = try #require(base64URLDecode(String(token.split(separator: ".")[1])))
        return try #require(try JSONSerialization.jsonObject(with: segment) as? [String: Any])
    }

    private func base64URLDecode(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}
