import Crypto
import Foundation
import NotifyModels
import Testing

@testable import PushDispatchCore

/// RFC 8292 VAPID: the `Authorization` header a push service checks.
@Suite("VAPID authorization")
struct VAPIDSignerTests {
    /// The parts of `vapid t=<JWT>, k=<key>`, the JWT's header and claims decoded.
    struct Authorization {
        var token: String
        var key: String
        var header: [String: Any]
        var claims: [String: Any]

        init(_ value: String) throws {
            let parts = try #require(value.wholeMatch(of: /vapid t=([A-Za-z0-9_.-]+), k=([A-Za-z0-9_-]+)/), "not `vapid t=…, k=…`: \(value)")
            token = String(parts.1)
            key = String(parts.2)
            let segments = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            try #require(segments.count == 3, "a JWT has three parts: \(token)")
            header = try Self.object(segments[0])
            claims = try Self.object(segments[1])
        }

        private static func object(_ segment: String) throws -> [String: Any] {
            let data = try #require(Base64URLCoding.decode(segment))
            return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        }

        /// Whether the JWT's ES256 signature (r || s over `header.claims`) verifies with `publicKey`.
        func isSigned(by publicKey: P256.Signing.PublicKey) throws -> Bool {
            let segments = token.split(separator: ".")
            let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(Base64URLCoding.decode(String(segments[2]))))
            return publicKey.isValidSignature(signature, for: Data("\(segments[0]).\(segments[1])".utf8))
        }
    }

    let key = P256.Signing.PrivateKey()
    let subject = "mailto:push@example.com"

    @Test("the JWT names the endpoint's origin, expires within 24 hours and names the contact; ES256 signed by the key in k=")
    func tokenAndKey() async throws {
        let now = Date()
        let value = try await VAPIDSigner().authorization(
            privateKeyPEM: key.pemRepresentation, subject: subject, endpoint: "https://fcm.googleapis.com/fcm/send/dQw4w9WgXcQ:APA91b", now: now)
        let authorization = try Authorization(value)
        #expect(authorization.header["alg"] as? String == "ES256")
        #expect(authorization.header["typ"] as? String == "JWT")
        #expect(authorization.claims["aud"] as? String == "https://fcm.googleapis.com")
        #expect(authorization.claims["sub"] as? String == subject)
        let expiry = try #require(authorization.claims["exp"] as? Double)
        #expect(expiry > now.timeIntervalSince1970)
        #expect(expiry <= now.timeIntervalSince1970 + 24 * 3600)
        #expect(authorization.key == Base64URLCoding.encode(key.publicKey.x963Representation))
        let publicKey = try P256.Signing.PublicKey(x963Representation: try #require(Base64URLCoding.decode(authorization.key)))
        #expect(try authorization.isSigned(by: publicKey))
        #expect(try !authorization.isSigned(by: P256.Signing.PrivateKey().publicKey))
    }

    @Test("the audience is the endpoint's origin: scheme and host, the port only when it is not the default", arguments: [
        ("https://updates.push.services.mozilla.com/wpush/v2/gAAAAA", "https://updates.push.services.mozilla.com"),
        ("https://web.push.apple.com:443/QGuQyavXutnMH", "https://web.push.apple.com"),
        ("https://Push.Example.NET:8443/channel?x=1", "https://push.example.net:8443"),
        ("http://127.0.0.1:22091/push/abc", "http://127.0.0.1:22091"),
    ])
    func audience(endpoint: String, origin: String) async throws {
        let value = try await VAPIDSigner().authorization(privateKeyPEM: key.pemRepresentation, subject: subject, endpoint: endpoint)
        #expect(try Authorization(value).claims["aud"] as? String == origin)
    }

    @Test("a header is reused for an hour per key and origin, then signed anew")
    func reuse() async throws {
        let signer = VAPIDSigner()
        let now = Date()
        func sign(_ endpoint: String, at time: Date) async throws -> String {
            try await signer.authorization(privateKeyPEM: key.pemRepresentation, subject: subject, endpoint: endpoint, now: time)
        }
        let first = try await sign("https://fcm.googleapis.com/fcm/send/one", at: now)
        #expect(try await sign("https://fcm.googleapis.com/fcm/send/two", at: now.addingTimeInterval(3599)) == first)
        #expect(try await sign("https://updates.push.services.mozilla.com/wpush/v2/x", at: now) != first)
        let later = try await sign("https://fcm.googleapis.com/fcm/send/one", at: now.addingTimeInterval(3600))
        #expect(later != first)
        let expiry = try #require(try Authorization(later).claims["exp"] as? Double)
        #expect(expiry > now.addingTimeInterval(3600).timeIntervalSince1970)
    }

    @Test("an endpoint that is not a URL is refused")
    func invalidEndpoint() async {
        await #expect(throws: VAPIDSigner.InvalidEndpoint.self) {
            try await VAPIDSigner().authorization(privateKeyPEM: key.pemRepresentation, subject: subject, endpoint: "not a url")
        }
    }
}
