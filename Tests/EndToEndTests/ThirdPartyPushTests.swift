import Crypto
import Foundation
import NotifyModels
import NotifyTestSupport
import Testing

extension EndToEndTests {
    /// What push-dispatch sends to Web Push and FCM, as the sandbox captured it, read by implementations that are
    /// neither the services' nor the sandbox's: http_ece decrypts a push, PyJWT verifies the VAPID JWT and the FCM
    /// service account's assertion (`Python/push_checks.py`).
    @Suite("Web Push and FCM checked by third-party implementations")
    struct ThirdPartyPushTests {
        private struct WebPushCredentials: Encodable {
            var vapidPrivateKey: String
            var subject: String
        }

        /// Runs `Python/push_checks.py` with `check`; answers what it printed.
        private static func run(_ check: JSONValue) async throws -> JSONValue {
            let python = try #require(
                ProcessInfo.processInfo.environment["NOTIFY_TEST_PYTHON"],
                "NOTIFY_TEST_PYTHON (a Python with http_ece and PyJWT) is set by deploy/local/test.sh")
            let run = try await Scripts.runProgram(
                python, ["\(Stack.root)/Tests/EndToEndTests/Python/push_checks.py", String(decoding: try JSONEncoder().encode(check), as: UTF8.self)])
            guard run.status == 0 else { throw TestFailure("push_checks.py exited \(run.status): \(run.output)") }
            return try JSONValue.parse(run.output)
        }

        @Test("Web Push: http_ece decrypts the aes128gcm body push-dispatch sent with the browser's private key and auth secret, and PyJWT verifies its VAPID JWT (ES256 by the app's key, aud, exp, sub)")
        func webPushDecryptsAndVerifies() async throws {
            let app = try await TestApp.create()
            let subject = "mailto:third-party@example.com"
            let stored = try await app.storeCredentials(
                "webpush", WebPushCredentials(vapidPrivateKey: P256.Signing.PrivateKey().pemRepresentation, subject: subject))
            let vapidPublicKey = try #require(stored["vapidPublicKey"]?.stringValue, "PUT answered no vapidPublicKey")
            let subscription = try await ProviderSandbox.webPushSubscription(applicationServerKey: vapidPublicKey)
            let token = String(try #require(subscription.endpoint.split(separator: "/").last))
            let user = "user-\(uniqueSuffix())"
            _ = try await app.registerDevice(of: user, platform: .webpush, pushToken: subscription.endpoint, keys: subscription.keys)

            let capture = try await ProviderSandbox.capture("/webpush/\(token)")
            let id = try await app.publishAccepted(.alert(to: user, title: "Order shipped", body: "On its way"))
            let request = try #require(try await ProviderSandbox.capturedRequests(capture).first, "nothing was sent to the subscription within 20 s")
            let browser = try await ProviderSandbox.webPushBrowserKeys(token)
            let checked = try await Self.run(.object([
                "check": .string("webpush"), "request": request,
                "privateKey": try #require(browser["privateKey"]), "auth": try #require(browser["auth"]),
                "vapidPublicKey": .string(vapidPublicKey), "audience": .string(Stack.sandboxProvidersURL),
            ]))

            let plaintext = try #require(checked["plaintext"])
            #expect(plaintext["notify"]?["id"]?.stringValue == id)
            #expect(plaintext["title"]?.stringValue == "Order shipped" && plaintext["body"]?.stringValue == "On its way")
            #expect(checked["header"]?["alg"]?.stringValue == "ES256")
            #expect(checked["claims"]?["sub"]?.stringValue == subject)
            #expect(checked["claims"]?["aud"]?.stringValue == Stack.sandboxProvidersURL)
            // The sandbox's own decryption read the same.
            let recorded = try await ProviderSandbox.waitForDeliveries("webpush", to: token)
            #expect(recorded.map(\.payload) == [plaintext])
        }

        @Test("FCM: PyJWT verifies the assertion push-dispatch sent to the OAuth token endpoint (RS256 by the service account's key, its kid, iss, scope, aud, iat, exp)")
        func fcmAssertionVerifies() async throws {
            let app = try await TestApp.create()
            let capture = try await ProviderSandbox.capture("/fcm/token")
            let account = try await app.storeFCMCredentials()
            let user = "user-\(uniqueSuffix())"
            let token = "e2e:\(randomHex(bytes: 24))"
            _ = try await app.registerDevice(of: user, platform: .fcm, pushToken: token)
            _ = try await app.publishAccepted(.alert(to: user))
            // Delivered: the access token was fetched before.
            #expect(try await ProviderSandbox.waitForDeliveries("fcm", to: token).count == 1, "the FCM device received nothing within 20 s")

            // Other apps' token requests may be among those captured: the check takes this account's.
            let requests = try await ProviderSandbox.capturedRequests(capture) { _ in true }
            let checked = try await Self.run(.object(["check": .string("fcm-assertion"), "requests": .array(requests), "serviceAccount": account]))
            #expect(checked["grantType"]?.stringValue == "urn:ietf:params:oauth:grant-type:jwt-bearer")
            #expect(checked["header"]?["alg"]?.stringValue == "RS256")
            #expect(checked["claims"]?["iss"]?.stringValue == account["client_email"]?.stringValue)
            #expect(checked["claims"]?["aud"]?.stringValue == Stack.sandboxProvidersURL + "/fcm/token")
            #expect(checked["claims"]?["scope"]?.stringValue?.contains("https://www.googleapis.com/auth/firebase.messaging") == true)
        }
    }
}
