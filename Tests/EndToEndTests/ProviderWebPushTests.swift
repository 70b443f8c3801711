import Crypto
import Foundation
import NotifyModels
import Testing

extension EndToEndTests {
    @Suite("Web Push: the encrypted message, and each error class's action")
    struct ProviderWebPushTests {
        private struct Credentials: Encodable {
            var vapidPrivateKey: String
            var subject = "mailto:e2e@example.com"
        }

        /// An app with a new VAPID key, and a browser of a new user subscribed for that key (or `subscriptionKey`).
        private struct Setup {
            var app: TestApp
            var user: String
            /// The push service's id of the subscription: the endpoint's last path segment.
            var token: String
            var subscriptionId: String
        }

        private func setUp(subscriptionKey: String? = nil) async throws -> Setup {
            let app = try await TestApp.create()
            let stored = try await app.storeCredentials("webpush", Credentials(vapidPrivateKey: P256.Signing.PrivateKey().pemRepresentation))
            let vapidPublicKey = try #require(stored["vapidPublicKey"]?.stringValue, "PUT answered no vapidPublicKey")
            let subscription = try await ProviderSandbox.webPushSubscription(applicationServerKey: subscriptionKey ?? vapidPublicKey)
            let user = "user-\(uniqueSuffix())"
            let subscriptionId = try await app.registerDevice(of: user, platform: .webpush, pushToken: subscription.endpoint, keys: subscription.keys)
            let token = String(try #require(subscription.endpoint.split(separator: "/").last))
            return Setup(app: app, user: user, token: token, subscriptionId: subscriptionId)
        }

        @Test("an alert arrives once, decrypting to the published content with notify.id and seq; TTL, Urgency and Topic set")
        func alertIsDelivered() async throws {
            let setup = try await setUp()
            let id = try await setup.app.publishAccepted(.alert(to: setup.user, title: "Order shipped", body: "On its way"))

            let deliveries = try await ProviderSandbox.waitForDeliveries("webpush", to: setup.token)
            let push = try #require(deliveries.first, "the browser received nothing within 20 s")
            let expected: JSONValue = .object([
                "notify": .object(["id": .string(id), "seq": .number(1), "kind": .string("created")]),
                "title": .string("Order shipped"), "body": .string("On its way"), "badge": .number(1),
            ])
            #expect(push.payload == expected)
            #expect(push.headers["content-encoding"] == "aes128gcm")
            #expect(push.headers["urgency"] == "high")
            let ttl = try #require(push.headers["ttl"].flatMap(Int.init), "TTL is not a number")
            #expect(ttl > 29 * 24 * 3600 && ttl <= 30 * 24 * 3600, "TTL is not the time left until the default 30-day expiration: \(ttl)")
            let notificationId = try #require(UUID(uuidString: id))
            let topic = Base64URLCoding.encode(withUnsafeBytes(of: notificationId.uuid) { Data($0) })
            #expect(push.headers["topic"] == topic)
            #expect(try await deliveriesAfterQuietPeriod("webpush", to: setup.token, duration: .seconds(1)).count == 1, "delivered more than once")
        }

        @Test("a browser is pushed only what it shows: a read, dismiss or delete on another device and a silent or raw notification reach the user's phone, not the browser, whose next alert carries the sequence to sync to",
              .timeLimit(.minutes(2)))
        func browserGetsOnlyAlerts() async throws {
            let setup = try await setUp()
            let user = try await setup.app.user(setup.user)
            let phone = try await setup.app.registerSubscribedDevice(of: setup.user)
            let tablet = try await setup.app.registerSubscribedDevice(of: setup.user)
            let first = try await setup.app.publishAccepted(.alert(to: setup.user, title: "first"))
            #expect(try await ProviderSandbox.waitForDeliveries("webpush", to: setup.token).compactMap(\.notificationId) == [first])

            // On the tablet: read, dismissed, then deleted; between them a silent and a raw notification.
            try await user.patchAccepted(first, StateChangeRequest(readState: .read), from: tablet.subscriptionId)
            try await user.patchAccepted(first, StateChangeRequest(userActionState: .dismissed), from: tablet.subscriptionId)
            let silent = try await setup.app.publishAccepted(NotificationRequest(
                userId: setup.user, payload: NotificationPayload(visualContent: VisualContent(title: "not shown")), push: PushOptions(delivery: .silent)))
            let raw = try await setup.app.publishAccepted(NotificationRequest(userId: setup.user, payload: NotificationPayload(rawContent: "sync me")))
            let deleted = try await user.delete(first, from: tablet.subscriptionId)
            #expect(deleted.status == 204 || deleted.status == 202, "DELETE answered \(deleted.status): \(deleted.text)")
            let second = try await setup.app.publishAccepted(.alert(to: setup.user, title: "second"))

            // The phone (APNs) gets all seven changes; the browser the two alerts only.
            let phoneGot = try await Sandbox.waitForDeliveries(to: phone.pushToken) { $0.count >= 7 }
            #expect(phoneGot.compactMap { $0.payload["notify"]?["kind"]?.stringValue }.sorted()
                == ["created", "created", "created", "created", "deleted", "stateChanged", "stateChanged"], "the phone got every change")
            #expect(Set(phoneGot.compactMap(\.notificationId)) == [first, silent, raw, second])
            _ = try await ProviderSandbox.waitForDeliveries("webpush", to: setup.token) { $0.count >= 2 }
            let browserGot = try await deliveriesAfterQuietPeriod("webpush", to: setup.token)
            #expect(browserGot.compactMap(\.notificationId) == [first, second], "the browser got the alerts only")
            #expect(browserGot.allSatisfy { $0.payload["title"]?.stringValue != nil }, "each with something to show")
            #expect(browserGot.last?.payload["notify"]?["seq"]?.intValue == 7, "the second alert's sequence: the page syncs the five changes before it")
        }

        @Test("push options in the decrypted JSON a service worker reads: subtitle, image, tag, sound, category, interruption level")
        func pushOptionsAreMapped() async throws {
            let setup = try await setUp()
            _ = try await setup.app.publishAccepted(.alert(to: setup.user, push: .everyOption))
            let push = try #require(try await ProviderSandbox.waitForDeliveries("webpush", to: setup.token).first?.payload)
            #expect(push["subtitle"]?.stringValue == "Order 42")
            #expect(push["image"]?.stringValue == "https://cdn.example.com/parcel.png")
            #expect(push["tag"]?.stringValue == "orders")
            #expect(push["sound"]?.stringValue == "chime.caf" && push["category"]?.stringValue == "OPEN_ORDER")
            #expect(push["interruptionLevel"]?.stringValue == "timeSensitive")
            #expect(push["data"]?["orderId"]?.stringValue == "42")
        }

        @Test("the app's data under data, whatever its names (category, title, sound), apart from what the service worker shows; the deep link as url")
        func appDataAndDeepLink() async throws {
            let setup = try await setUp()
            _ = try await setup.app.publishAccepted(.alert(to: setup.user, push: .appDataAndLink))
            let push = try #require(try await ProviderSandbox.waitForDeliveries("webpush", to: setup.token).first?.payload)
            #expect(push["title"]?.stringValue == "Order shipped" && push["category"]?.stringValue == "OPEN_ORDER" && push["sound"]?.stringValue == "chime.caf")
            #expect(push["data"] == .object(PushOptions.appDataOfEveryName))
            #expect(push["url"]?.stringValue == "https://shop.example.com/orders/42?tab=tracking")
        }

        @Test("503 once: retried through a retry queue, then delivered")
        func unavailableIsRetried() async throws {
            let setup = try await setUp()
            try await ProviderSandbox.fault("webpush", token: setup.token, status: 503, retryAfter: 1)
            let id = try await setup.app.publishAccepted(.alert(to: setup.user))

            #expect(try await ProviderSandbox.waitForDeliveries("webpush", to: setup.token).count == 1, "the retried push did not arrive within 20 s")
            let log = try await setup.app.deliveryLog(of: id) { $0.contains { $0.result == "accepted" } }
            #expect(log.map(\.result) == ["retrying", "accepted"])
        }

        @Test("404 and 410 remove the subscription", arguments: [404, 410])
        func goneSubscriptionIsRemoved(status: Int) async throws {
            let setup = try await setUp()
            try await ProviderSandbox.fault("webpush", token: setup.token, status: status)
            let id = try await setup.app.publishAccepted(.alert(to: setup.user))

            #expect(try await !Database.subscriptionExists(setup.subscriptionId, of: setup.app.appId, expecting: false), "the subscription was not removed")
            #expect(try await setup.app.deliveryLog(of: id) { !$0.isEmpty }.map(\.result) == ["tokenInvalid"])
        }

        @Test("400: dead-lettered, logged as failed, nothing delivered, the subscription kept")
        func badRequestFails() async throws {
            let setup = try await setUp()
            try await ProviderSandbox.fault("webpush", token: setup.token, status: 400, reason: "Bad request")
            let id = try await setup.app.publishAccepted(.alert(to: setup.user))

            #expect(try await setup.app.deliveryLog(of: id) { !$0.isEmpty }.map(\.result) == ["failed"])
            #expect(try await deliveriesAfterQuietPeriod("webpush", to: setup.token).isEmpty, "a failed push was delivered")
            #expect(try await Database.subscriptionExists(setup.subscriptionId, of: setup.app.appId, expecting: true))
        }

        @Test("403 (a subscription made for another VAPID key): credentials flagged, the subscription kept")
        func refusedVAPIDKeyIsFlagged() async throws {
            let otherKey = Base64URLCoding.encode(P256.Signing.PrivateKey().publicKey.x963Representation)
            let setup = try await setUp(subscriptionKey: otherKey)
            let id = try await setup.app.publishAccepted(.alert(to: setup.user))

            #expect(try await setup.app.deliveryLog(of: id) { !$0.isEmpty }.map(\.result) == ["credentialsRejected"])
            #expect(try await Database.credentialsRejection(appId: setup.app.appId, provider: "webpush") != nil, "the credentials were not flagged")
            #expect(try await Database.subscriptionExists(setup.subscriptionId, of: setup.app.appId, expecting: true))
        }
    }
}
