import Crypto
import Foundation
import NotifyModels
import Testing

extension EndToEndTests {
    /// Several sets of credentials on FCM, WNS and Web Push, each app identity's devices pushed with its own: the sandbox
    /// accepts a push only from the identity the device belongs to (a project's service account, the WNS app a channel
    /// was made for, the VAPID key a browser subscribed with) and records who authenticated.
    @Suite("app identities on FCM, WNS and Web Push")
    struct AppIdentityTests {
        private struct WebPushCredentials: Encodable {
            var vapidPrivateKey: String
            var subject = "mailto:e2e@example.com"
        }

        /// A device registered for one set of credentials.
        private struct Identity {
            var provider: String
            var appPackage: String?
            /// The device's name in the sandbox's records.
            var token: String
            /// Who the sandbox must see authenticated: the service account's email, the WNS client id, the VAPID key.
            var authenticatedAs: String
        }

        private static let providers = ["fcm", "wns", "webpush"]

        /// New credentials on `provider` stored in `app` (for `appPackage`, else as the app's default), and a device of
        /// `user` registered for them.
        private static func identity(_ provider: String, in app: TestApp, appPackage: String?, user: String) async throws -> Identity {
            switch provider {
            case "fcm":
                let account = try await app.storeFCMCredentials(appPackage: appPackage)
                let token = "e2e:\(randomHex(bytes: 24))"
                _ = try await app.registerDevice(of: user, platform: .fcm, pushToken: token, appPackage: appPackage)
                return Identity(provider: provider, appPackage: appPackage, token: token, authenticatedAs: try #require(account["client_email"]?.stringValue))
            case "wns":
                let wns = try await ProviderSandbox.wnsAppAndChannel()
                try await app.storeWNSCredentials(packageSid: wns.clientId, clientSecret: wns.clientSecret, appPackage: appPackage)
                _ = try await app.registerDevice(of: user, platform: .wns, pushToken: wns.channelUri, appPackage: appPackage)
                let token = String(try #require(wns.channelUri.split(separator: "/").last))
                return Identity(provider: provider, appPackage: appPackage, token: token, authenticatedAs: wns.clientId)
            default:
                let stored = try await app.storeCredentials(
                    "webpush", WebPushCredentials(vapidPrivateKey: P256.Signing.PrivateKey().pemRepresentation), appPackage: appPackage)
                let vapidPublicKey = try #require(stored["vapidPublicKey"]?.stringValue)
                let subscription = try await ProviderSandbox.webPushSubscription(applicationServerKey: vapidPublicKey)
                _ = try await app.registerDevice(
                    of: user, platform: .webpush, pushToken: subscription.endpoint, keys: subscription.keys, appPackage: appPackage)
                let token = String(try #require(subscription.endpoint.split(separator: "/").last))
                return Identity(provider: provider, appPackage: appPackage, token: token, authenticatedAs: vapidPublicKey)
            }
        }

        /// Expects `count` pushes at each identity's device, every one authenticated as that identity.
        private static func expectPushes(_ count: Int, at identities: [Identity], in app: TestApp) async throws {
            for identity in identities {
                _ = try await ProviderSandbox.waitForDeliveries(identity.provider, to: identity.token) { $0.count >= count }
                let pushes = try await deliveriesAfterQuietPeriod(identity.provider, to: identity.token, duration: .milliseconds(500))
                let who = "\(app.appId)'s \(identity.provider) device of \(identity.appPackage ?? "the default identity")"
                #expect(pushes.count == count, "\(who) got \(pushes.count) pushes")
                #expect(pushes.allSatisfy { $0.authenticatedAs == identity.authenticatedAs },
                        "\(who) was pushed as \(pushes.map { $0.authenticatedAs ?? "nobody" }), not as \(identity.authenticatedAs)")
            }
            #expect(Set(identities.map(\.authenticatedAs)).count == identities.count, "each identity is another")
        }

        @Test("an app's second identity (appPackage): one notification reaches the user's devices of both, each pushed with its identity's credentials")
        func secondIdentityOfOneApp() async throws {
            let app = try await TestApp.create()
            let user = "user-\(uniqueSuffix())"
            var identities: [Identity] = []
            for provider in Self.providers {
                identities.append(try await Self.identity(provider, in: app, appPackage: nil, user: user))
                identities.append(try await Self.identity(provider, in: app, appPackage: "com.example.second", user: user))
            }
            _ = try await app.publishAccepted(.alert(to: user))
            try await Self.expectPushes(1, at: identities, in: app)
        }

        @Test("two apps publishing at once: each app's pushes authenticated as that app")
        func twoAppsAtOnce() async throws {
            var apps: [(app: TestApp, user: String, identities: [Identity])] = []
            for _ in 0..<2 {
                let app = try await TestApp.create()
                let user = "user-\(uniqueSuffix())"
                var identities: [Identity] = []
                for provider in Self.providers {
                    identities.append(try await Self.identity(provider, in: app, appPackage: nil, user: user))
                }
                apps.append((app, user, identities))
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (app, user, _) in apps {
                    for index in 0..<3 {
                        group.addTask { _ = try await app.publishAccepted(.alert(to: user, title: "number \(index)")) }
                    }
                }
                try await group.waitForAll()
            }
            for (app, _, identities) in apps {
                try await Self.expectPushes(3, at: identities, in: app)
            }
        }
    }
}
