import Crypto
import Foundation
import NotifyModels
import Testing

extension EndToEndTests {
    /// A provider's answer that a device's token is no more: the subscription goes, and the app's webhook hears why.
    @Suite("tokens a provider declares invalid")
    struct TokenInvalidTests {
        private struct WebPushCredentials: Encodable {
            var vapidPrivateKey: String
            var subject = "mailto:e2e@example.com"
        }

        /// A device of `user` on `provider`, its credentials stored in `app`: the subscription id, and the token the
        /// sandbox knows the device by.
        private static func device(on provider: String, of user: String, in app: TestApp) async throws -> (subscriptionId: String, token: String) {
            switch provider {
            case "apns":
                let device = try await app.registerSubscribedDevice(of: user)
                return (device.subscriptionId, device.pushToken)
            case "fcm":
                try await app.storeFCMCredentials()
                let token = "e2e:\(randomHex(bytes: 24))"
                return (try await app.registerDevice(of: user, platform: .fcm, pushToken: token), token)
            case "wns":
                let wns = try await ProviderSandbox.wnsAppAndChannel()
                try await app.storeWNSCredentials(packageSid: wns.clientId, clientSecret: wns.clientSecret)
                let token = String(try #require(wns.channelUri.split(separator: "/").last))
                return (try await app.registerDevice(of: user, platform: .wns, pushToken: wns.channelUri), token)
            default:
                let stored = try await app.storeCredentials("webpush", WebPushCredentials(vapidPrivateKey: P256.Signing.PrivateKey().pemRepresentation))
                let subscription = try await ProviderSandbox.webPushSubscription(applicationServerKey: try #require(stored["vapidPublicKey"]?.stringValue))
                let token = String(try #require(subscription.endpoint.split(separator: "/").last))
                return (try await app.registerDevice(of: user, platform: .webpush, pushToken: subscription.endpoint, keys: subscription.keys), token)
            }
        }

        @Test("the provider's 'no such token' removes the subscription, logged tokenInvalid, and the webhook gets subscription.deleted with reason tokenInvalid",
              arguments: [("apns", 410, "Unregistered"), ("fcm", 404, "UNREGISTERED"), ("wns", 410, "The channel expired"), ("webpush", 410, "Subscription expired")])
        func invalidTokenRemovesSubscription(provider: String, status: Int, reason: String) async throws {
            let app = try await TestApp.create()
            let receiver = "\(Stack.sandboxURL)/receivers/invalid-\(uniqueSuffix())"
            #expect(try await StackClient.send(.PUT, receiver).status == 204)
            let put = try await StackClient.send(
                .PUT, "\(Stack.ingestURL)/v1/apps/\(app.appId)/webhook", bearer: app.apiKey, json: StackClient.encode(WebhookRequest(url: receiver)))
            #expect(put.status == 201, "\(put.text)")
            let user = "user-\(uniqueSuffix())"
            let device = try await Self.device(on: provider, of: user, in: app)

            try await ProviderSandbox.fault(provider, token: device.token, status: status, reason: reason)
            let id = try await app.publishAccepted(.alert(to: user))
            #expect(try await app.deliveryLog(of: id) { !$0.isEmpty }.map(\.result) == ["tokenInvalid"])
            #expect(try await !Database.subscriptionExists(device.subscriptionId, of: app.appId, expecting: false), "the subscription was not removed")

            let events = try await WebhookReceiver.events(at: receiver, timeout: .seconds(20)) { events in
                events.contains { $0.type == "subscription.deleted" }
            }
            #expect(events.map(\.type) == ["subscription.created", "subscription.deleted"])
            let deleted = try #require(events.last)
            #expect(deleted.data["reason"] == "tokenInvalid")
            #expect(deleted.data["subscriptionId"] == device.subscriptionId && deleted.data["userId"] == user)
        }
    }
}
