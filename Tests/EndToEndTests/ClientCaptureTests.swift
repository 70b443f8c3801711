import Crypto
import Foundation
import NotifyClient
import NotifyModels
import Testing

extension EndToEndTests {
    @Suite("the client library on pushes captured at each provider")
    struct ClientCaptureTests {
        private struct WebPushCredentials: Encodable {
            var vapidPrivateKey: String
            var subject = "mailto:ops@example.com"
        }

        /// What an app's push callback gets from the push as the sandbox received it: APNs' payload as the userInfo,
        /// FCM's `data` map, the decrypted Web Push JSON, a WNS toast's launch arguments.
        private static func userInfo(_ provider: String, _ payload: JSONValue) throws -> [AnyHashable: Any] {
            switch provider {
            case "fcm":
                return try #require(try object(payload)["data"] as? [AnyHashable: Any])
            case "wns":
                let toast = try #require(payload.stringValue)
                let start = try #require(toast.range(of: "launch=\"")?.upperBound)
                let end = try #require(toast[start...].firstIndex(of: "\""))
                return ["launch": toast[start..<end].replacingOccurrences(of: "&amp;", with: "&")]
            default:
                return try object(payload)
            }
        }

        private static func object(_ value: JSONValue) throws -> [AnyHashable: Any] {
            try #require(try JSONSerialization.jsonObject(with: WireCoding.makeEncoder().encode(value)) as? [AnyHashable: Any])
        }

        @Test("the push each provider's endpoint received (APNs, FCM, Web Push, WNS) is recognised by the client library, which syncs the notification", .timeLimit(.minutes(2)))
        func capturedPushesAreProcessed() async throws {
            let app = try await TestApp.create()
            try await app.storeFCMCredentials()
            let wns = try await ProviderSandbox.wnsAppAndChannel()
            try await app.storeWNSCredentials(packageSid: wns.clientId, clientSecret: wns.clientSecret)
            SecretsUsed.record([wns.clientSecret])
            let vapid = P256.Signing.PrivateKey()
            let stored = try await app.storeCredentials("webpush", WebPushCredentials(vapidPrivateKey: vapid.pemRepresentation))
            let browser = try await ProviderSandbox.webPushSubscription(applicationServerKey: try #require(stored["vapidPublicKey"]?.stringValue))

            let user = "user-\(uniqueSuffix())"
            let apnsToken = try await app.registerDevice(of: user)
            let fcmToken = "e2e:\(randomHex(bytes: 24))"
            _ = try await app.registerDevice(of: user, platform: .fcm, pushToken: fcmToken)
            _ = try await app.registerDevice(of: user, platform: .wns, pushToken: wns.channelUri)
            _ = try await app.registerDevice(of: user, platform: .webpush, pushToken: browser.endpoint, keys: browser.keys)
            let id = try await app.publishAccepted(.alert(to: user, title: "Captured", body: "at each provider"))

            var captured: [(String, JSONValue)] = []
            captured.append(("apns", try #require(try await Sandbox.waitForDeliveries(to: apnsToken) { !$0.isEmpty }.first?.payload)))
            for (provider, token) in [("fcm", fcmToken), ("wns", String(wns.channelUri.split(separator: "/").last ?? "")),
                                      ("webpush", String(browser.endpoint.split(separator: "/").last ?? ""))] {
                captured.append((provider, try #require(try await ProviderSandbox.waitForDeliveries(provider, to: token).first?.payload, "\(provider)")))
            }
            for (provider, payload) in captured {
                let storage = FileManager.default.temporaryDirectory.appending(path: "capture-\(UUID().uuidString)")
                defer { try? FileManager.default.removeItem(at: storage) }
                let client = try NotifyClient(
                    configuration: .init(baseURL: URL(string: Stack.ingestURL)!, appId: app.appId, storageDirectory: storage),
                    tokenProvider: { try await app.userToken(user) })
                guard case .processed(let changes) = try await client.processPushNotification(try Self.userInfo(provider, payload)) else {
                    Issue.record("\(provider)'s push was not recognised: \(payload)")
                    continue
                }
                #expect(changes.map(\.notification.id.uuidString.localizedLowercase) == [id], "\(provider)")
            }
        }
    }
}
