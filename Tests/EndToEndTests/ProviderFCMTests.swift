import Foundation
import NotifyModels
import Testing

extension EndToEndTests {
    @Suite("FCM HTTP v1: the message, and each error class's action")
    struct ProviderFCMTests {
        /// An app with a new sandbox service account as its FCM credentials, and an FCM device of a new user.
        private struct Setup {
            var app: TestApp
            var user: String
            var token: String
            var subscriptionId: String
        }

        private func setUp(serviceAccount: (JSONValue) -> JSONValue = { $0 }) async throws -> Setup {
            let app = try await TestApp.create()
            try await app.storeFCMCredentials(adjusting: serviceAccount)
            let user = "user-\(uniqueSuffix())"
            let token = "e2e:\(randomHex(bytes: 24))"
            let subscriptionId = try await app.registerDevice(of: user, platform: .fcm, pushToken: token)
            return Setup(app: app, user: user, token: token, subscriptionId: subscriptionId)
        }

        @Test("an alert reaches the device once: its token, the collapse key, priority, TTL, data and notification parts")
        func alertIsDelivered() async throws {
            let setup = try await setUp()
            let id = try await setup.app.publishAccepted(.alert(to: setup.user, title: "Order shipped", body: "On its way"))

            let deliveries = try await ProviderSandbox.waitForDeliveries("fcm", to: setup.token)
            let message = try #require(deliveries.first, "the FCM device received nothing within 20 s").payload
            #expect(message["token"]?.stringValue == setup.token)
            #expect(message["android"]?["collapse_key"]?.stringValue == id)
            #expect(message["android"]?["priority"]?.stringValue == "HIGH")
            let ttl = message["android"]?["ttl"]?.stringValue.flatMap { Int($0.dropLast()) }
            #expect(ttl.map { (1...28 * 24 * 3600).contains($0) } == true, "android.ttl is not within FCM's 28 days: \(ttl.map(String.init) ?? "missing")")
            #expect(message["notification"]?["title"]?.stringValue == "Order shipped")
            #expect(message["notification"]?["body"]?.stringValue == "On its way")
            #expect(message["data"]?["notifyId"]?.stringValue == id)
            #expect(message["data"]?["notifySeq"]?.stringValue == "1")
            #expect(deliveries.first?.headers["content-type"]?.hasPrefix("application/json") == true)
            #expect(try await deliveriesAfterQuietPeriod("fcm", to: setup.token, duration: .seconds(1)).count == 1, "delivered more than once")
            let log = try await setup.app.deliveryLog(of: id) { $0.contains { $0.result == "accepted" } }
            #expect(log.map(\.result) == ["accepted"])
        }

        @Test("every push option FCM v1 has arrives there (the sandbox refuses a field v1 does not know): the image, localized texts and priority under android.notification")
        func everyPushOptionIsMapped() async throws {
            let setup = try await setUp()
            _ = try await setup.app.publishAccepted(.alert(to: setup.user, push: .everyOption))
            let message = try #require(try await ProviderSandbox.waitForDeliveries("fcm", to: setup.token).first?.payload)
            #expect(message["notification"]?["image"]?.stringValue == "https://cdn.example.com/parcel.png")
            let android = try #require(message["android"]?["notification"])
            #expect(android["title_loc_key"]?.stringValue == "SHIPPED_TITLE" && android["title_loc_args"] == .array([.string("42")]))
            #expect(android["body_loc_key"]?.stringValue == "SHIPPED_BODY" && android["body_loc_args"] == .array([.string("Ana"), .string("Tuesday")]))
            #expect(android["notification_priority"]?.stringValue == "PRIORITY_HIGH")
            #expect(android["sound"]?.stringValue == "chime.caf" && android["click_action"]?.stringValue == "OPEN_ORDER" && android["tag"]?.stringValue == "orders")
            #expect(message.fcmAppData?["orderId"]?.stringValue == "42")
        }

        @Test("push options reach FCM where v1 has them: sound, click_action and the group's tag under android.notification, app data as JSON text under data")
        func pushOptionsAreMapped() async throws {
            let setup = try await setUp()
            let request = NotificationRequest(
                userId: setup.user, groupName: "orders",
                payload: NotificationPayload(visualContent: VisualContent(title: "Order shipped", body: "On its way")),
                push: PushOptions(sound: "chime.caf", category: "OPEN_ORDER", data: ["orderId": .string("42"), "items": .number(3), "gift": .bool(true)]))
            _ = try await setup.app.publishAccepted(request)
            let message = try #require(try await ProviderSandbox.waitForDeliveries("fcm", to: setup.token).first?.payload)
            #expect(message["android"]?["notification"]?["sound"]?.stringValue == "chime.caf")
            #expect(message["android"]?["notification"]?["click_action"]?.stringValue == "OPEN_ORDER")
            #expect(message["android"]?["notification"]?["tag"]?.stringValue == "orders")
            #expect(message.fcmAppData == .object(["orderId": .string("42"), "items": .number(3), "gift": .bool(true)]), "the app's data as JSON text, its types kept")
        }

        @Test("the app's data as JSON text under data.data, whatever its names; the deep link (notifyUrl, webpush.fcm_options.link, the apns block's target-content-id); the Android channel; the apns and webpush blocks")
        func appDataDeepLinkAndPlatformBlocks() async throws {
            let setup = try await setUp()
            _ = try await setup.app.publishAccepted(.alert(to: setup.user, push: .appDataAndLink))
            let message = try #require(try await ProviderSandbox.waitForDeliveries("fcm", to: setup.token).first?.payload)
            let link = "https://shop.example.com/orders/42?tab=tracking"
            #expect(message.fcmAppData == .object(PushOptions.appDataOfEveryName), "every name, FCM's from and notify's notifyId included")
            #expect(message["data"]?["category"] == nil && message["data"]?["notifyUrl"]?.stringValue == link)
            #expect(message["android"]?["notification"]?["channel_id"]?.stringValue == "orders")
            #expect(message["android"]?["notification"]?["click_action"]?.stringValue == "OPEN_ORDER")
            let apns = try #require(message["apns"])
            #expect(apns["headers"] == .object(["apns-push-type": .string("alert"), "apns-priority": .string("10")]))
            let aps = try #require(apns["payload"]?["aps"])
            #expect(aps["alert"]?["title"]?.stringValue == "Order shipped" && aps["sound"]?.stringValue == "chime.caf")
            #expect(aps["badge"]?.intValue == 1 && aps["content-available"]?.intValue == 1 && aps["target-content-id"]?.stringValue == link)
            let webpush = try #require(message["webpush"])
            #expect(webpush["headers"]?["Urgency"]?.stringValue == "high")
            let ttl = webpush["headers"]?["TTL"]?.stringValue.flatMap { Int($0) }
            #expect(ttl.map { (1...28 * 24 * 3600).contains($0) } == true, "webpush TTL: \(ttl.map(String.init) ?? "missing")")
            #expect(webpush["fcm_options"]?["link"]?.stringValue == link)

            // A shoulder tap: background at priority 5 with content-available for an Apple device, low urgency for a browser.
            _ = try await setup.app.publishAccepted(NotificationRequest(userId: setup.user, payload: NotificationPayload(rawContent: "sync")))
            let tap = try #require(try await ProviderSandbox.waitForDeliveries("fcm", to: setup.token) { $0.count >= 2 }.last?.payload)
            #expect(tap["apns"]?["headers"] == .object(["apns-push-type": .string("background"), "apns-priority": .string("5")]))
            #expect(tap["apns"]?["payload"]?["aps"]?["content-available"]?.intValue == 1 && tap["apns"]?["payload"]?["aps"]?["alert"] == nil)
            #expect(tap["webpush"]?["headers"]?["Urgency"]?.stringValue == "low" && tap["webpush"]?["fcm_options"] == nil)
        }

        @Test("503 UNAVAILABLE once: retried through a retry queue, then delivered", arguments: [(503, "UNAVAILABLE"), (500, "INTERNAL")])
        func unavailableIsRetried(status: Int, reason: String) async throws {
            let setup = try await setUp()
            try await ProviderSandbox.fault("fcm", token: setup.token, status: status, reason: reason)
            let id = try await setup.app.publishAccepted(.alert(to: setup.user))

            let deliveries = try await ProviderSandbox.waitForDeliveries("fcm", to: setup.token)
            #expect(deliveries.count == 1, "the retried push did not arrive within 20 s")
            let log = try await setup.app.deliveryLog(of: id) { $0.contains { $0.result == "accepted" } }
            #expect(log.map(\.result) == ["retrying", "accepted"])
            #expect(log.first?.status == status)
            #expect(log.first?.reason == reason)
        }

        @Test("404 UNREGISTERED and 403 SENDER_ID_MISMATCH remove the device subscription", arguments: [(404, "UNREGISTERED"), (403, "SENDER_ID_MISMATCH")])
        func unregisteredTokenIsRemoved(status: Int, reason: String) async throws {
            let setup = try await setUp()
            try await ProviderSandbox.fault("fcm", token: setup.token, status: status, reason: reason)
            let id = try await setup.app.publishAccepted(.alert(to: setup.user))

            #expect(try await !Database.subscriptionExists(setup.subscriptionId, of: setup.app.appId, expecting: false), "the subscription was not removed")
            let log = try await setup.app.deliveryLog(of: id) { !$0.isEmpty }
            #expect(log.map(\.result) == ["tokenInvalid"])
        }

        @Test("400 INVALID_ARGUMENT: dead-lettered, logged as failed, nothing delivered, the subscription kept")
        func invalidArgumentFails() async throws {
            let setup = try await setUp()
            try await ProviderSandbox.fault("fcm", token: setup.token, status: 400, reason: "INVALID_ARGUMENT")
            let id = try await setup.app.publishAccepted(.alert(to: setup.user))

            let log = try await setup.app.deliveryLog(of: id) { !$0.isEmpty }
            #expect(log.map(\.result) == ["failed"])
            #expect(log.first?.reason == "INVALID_ARGUMENT")
            let dead = try await Broker.deadPushJobs("fcm", notificationId: id)
            #expect(dead.map(\.reason) == ["INVALID_ARGUMENT"], "push.fcm.dead holds \(dead.count) jobs of this notification")
            #expect(try await deliveriesAfterQuietPeriod("fcm", to: setup.token).isEmpty, "a failed push was delivered")
            #expect(try await Database.subscriptionExists(setup.subscriptionId, of: setup.app.appId, expecting: true))
        }

        @Test("429 QUOTA_EXCEEDED with Retry-After 1: retried, but not sooner than a minute")
        func quotaExceededBacksOffAMinute() async throws {
            let setup = try await setUp()
            try await ProviderSandbox.fault("fcm", token: setup.token, status: 429, reason: "QUOTA_EXCEEDED", retryAfter: 1)
            let id = try await setup.app.publishAccepted(.alert(to: setup.user))

            let log = try await setup.app.deliveryLog(of: id) { !$0.isEmpty }
            #expect(log.map(\.result) == ["retrying"])
            #expect(log.first?.status == 429)
            // The default delays are 1, 5, 25, 125 s: a retry honouring Retry-After 1 would have arrived by now.
            #expect(try await deliveriesAfterQuietPeriod("fcm", to: setup.token, duration: .seconds(7)).isEmpty, "retried within a minute")
        }

        @Test("401 once: the access token is dropped, a new one fetched, and the push delivered without flagging anything")
        func refusedAccessTokenIsRenewed() async throws {
            let setup = try await setUp()
            try await ProviderSandbox.fault("fcm", token: setup.token, status: 401)
            let id = try await setup.app.publishAccepted(.alert(to: setup.user))

            #expect(try await ProviderSandbox.waitForDeliveries("fcm", to: setup.token).count == 1, "not delivered after the token was renewed")
            let log = try await setup.app.deliveryLog(of: id) { !$0.isEmpty }
            #expect(log.map(\.result) == ["accepted"])
            #expect(try await Database.credentialsRejection(appId: setup.app.appId, provider: "fcm", timeout: .zero) == nil)
        }

        @Test("a service account without permission on the project: credentials flagged, the subscription kept")
        func refusedCredentialsAreFlagged() async throws {
            // The key file names another project than the account's own: FCM answers 403 PERMISSION_DENIED.
            let setup = try await setUp { account in
                guard case .object(var fields) = account else { return account }
                fields["project_id"] = .string("e2e-other-\(uniqueSuffix())")
                return .object(fields)
            }
            let id = try await setup.app.publishAccepted(.alert(to: setup.user))

            let log = try await setup.app.deliveryLog(of: id) { !$0.isEmpty }
            #expect(log.map(\.result) == ["credentialsRejected"])
            #expect(try await Database.credentialsRejection(appId: setup.app.appId, provider: "fcm") != nil, "the credentials were not flagged")
            #expect(try await Database.subscriptionExists(setup.subscriptionId, of: setup.app.appId, expecting: true))
        }
    }
}
