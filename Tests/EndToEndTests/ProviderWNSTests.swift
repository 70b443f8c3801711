import Foundation
import NotifyModels
import Testing

extension EndToEndTests {
    @Suite("WNS: toasts, raw shoulder taps, clearing a toast handled elsewhere, and each error class's action")
    struct ProviderWNSTests {
        /// An app with new WNS credentials, and a Windows device of a new user on a channel only that app may push to.
        private struct Setup {
            var app: TestApp
            var user: String
            /// The channel id: the channel URI's last path segment.
            var token: String
            var subscriptionId: String
        }

        private func setUp(clientSecret: String? = nil) async throws -> Setup {
            let app = try await TestApp.create()
            let wns = try await ProviderSandbox.wnsAppAndChannel()
            try await app.storeWNSCredentials(packageSid: wns.clientId, clientSecret: clientSecret ?? wns.clientSecret)
            let user = "user-\(uniqueSuffix())"
            let subscriptionId = try await app.registerDevice(of: user, platform: .wns, pushToken: wns.channelUri)
            return Setup(app: app, user: user, token: String(try #require(wns.channelUri.split(separator: "/").last)), subscriptionId: subscriptionId)
        }

        @Test("an alert arrives once as a toast with the title, tagged with the notification id in the notify group, with a TTL")
        func toastIsDelivered() async throws {
            let setup = try await setUp()
            let id = try await setup.app.publishAccepted(.alert(to: setup.user, title: "Order shipped", body: "On its way"))

            let deliveries = try await ProviderSandbox.waitForDeliveries("wns", to: setup.token)
            let toast = try #require(deliveries.first, "the channel received nothing within 20 s")
            #expect(toast.headers["x-wns-type"] == "wns/toast")
            #expect(toast.headers["content-type"] == "text/xml")
            #expect(toast.headers["x-wns-tag"] == id)
            #expect(toast.headers["x-wns-group"] == "notify")
            #expect(toast.headers["x-wns-ttl"].flatMap(Int.init).map { $0 > 0 } == true, "X-WNS-TTL: \(toast.headers["x-wns-ttl"] ?? "missing")")
            let xml = try #require(toast.payload.stringValue)
            #expect(xml.hasPrefix("<toast"))
            #expect(xml.contains("<text>Order shipped</text>"))
            #expect(xml.contains("notifyId=\(id)"))
            #expect(try await deliveriesAfterQuietPeriod("wns", to: setup.token, duration: .seconds(1)).count == 1, "delivered more than once")
        }

        @Test("a notification's groupName is its toast's group, and its displayTimeToLive bounds the toast's TTL")
        func groupAndDisplayTime() async throws {
            let setup = try await setUp()
            var request = NotificationRequest.alert(to: setup.user, title: "In the orders group")
            request.groupName = "orders"
            request.displayTimeToLive = 90
            _ = try await setup.app.publishAccepted(request)
            let toast = try #require(try await ProviderSandbox.waitForDeliveries("wns", to: setup.token).first)
            #expect(toast.headers["x-wns-group"] == "orders")
            let ttl = try #require(toast.headers["x-wns-ttl"].flatMap(Int.init))
            #expect(ttl > 0 && ttl <= 90, "X-WNS-TTL \(ttl): at most the display time, not the notification's expiration")
        }

        @Test("push options in the toast (the sandbox refuses XML that is not well-formed): subtitle, hero image, urgent scenario, a Windows sound")
        func pushOptionsAreMapped() async throws {
            let setup = try await setUp()
            var options = PushOptions.everyOption
            options.sound = "ms-winsoundevent:Notification.Mail"
            options.subtitle = "Order 42 & more"
            _ = try await setup.app.publishAccepted(.alert(to: setup.user, push: options))
            let xml = try #require(try await ProviderSandbox.waitForDeliveries("wns", to: setup.token).first?.payload.stringValue)
            #expect(xml.contains(" scenario=\"urgent\""), "\(xml)")
            #expect(xml.contains("<text>Order shipped</text><text>Order 42 &amp; more</text><text>On its way</text>"), "\(xml)")
            #expect(xml.contains("<image placement=\"hero\" src=\"https://cdn.example.com/parcel.png\"/>"), "\(xml)")
            #expect(xml.contains("<audio src=\"ms-winsoundevent:Notification.Mail\"/>"), "\(xml)")
        }

        @Test("the deep link in the toast's launch arguments beside the marker; X-WNS-Priority from the notification's priority (high 1, low 3); the app's data under data of a raw notification")
        func deepLinkPriorityAndAppData() async throws {
            let setup = try await setUp()
            let id = try await setup.app.publishAccepted(.alert(to: setup.user, push: .appDataAndLink))
            let toast = try #require(try await ProviderSandbox.waitForDeliveries("wns", to: setup.token).first)
            let xml = try #require(toast.payload.stringValue)
            #expect(xml.contains("launch=\"notifyId=\(id)&amp;notifySeq=1&amp;url=https%3A%2F%2Fshop.example.com%2Forders%2F42%3Ftab%3Dtracking\""), "\(xml)")
            #expect(toast.headers["x-wns-priority"] == "1")
            var low = NotificationRequest.alert(to: setup.user, push: .appDataAndLink)
            low.priority = .low
            _ = try await setup.app.publishAccepted(low)
            let lowToast = try #require(try await ProviderSandbox.waitForDeliveries("wns", to: setup.token) { $0.count >= 2 }.last)
            #expect(lowToast.headers["x-wns-priority"] == "3")
            _ = try await setup.app.publishAccepted(NotificationRequest(
                userId: setup.user, payload: NotificationPayload(rawContent: "sync"), push: PushOptions(data: ["title": .string("y")])))
            let raw = try #require(try await ProviderSandbox.waitForDeliveries("wns", to: setup.token) { $0.count >= 3 }.last)
            #expect(raw.headers["x-wns-type"] == "wns/raw" && raw.headers["x-wns-priority"] == "3")
            let body = try #require(raw.payload.stringValue.map { Data($0.utf8) })
            let tap = try WireCoding.makeDecoder().decode(JSONValue.self, from: body)
            #expect(tap["data"] == .object(["title": .string("y")]) && tap["rawContent"]?.stringValue == "sync", "\(tap)")
        }

        @Test("dismissed on another device: the toast is cleared (DELETE with X-WNS-Match), then a raw shoulder tap follows")
        func dismissElsewhereClearsTheToast() async throws {
            let setup = try await setUp()
            let phone = try await setup.app.registerSubscribedDevice(of: setup.user)
            let id = try await setup.app.publishAccepted(.alert(to: setup.user))
            #expect(try await ProviderSandbox.waitForDeliveries("wns", to: setup.token).count == 1, "the toast did not arrive")

            let dismissed = try await StackClient.send(
                .PATCH, "\(Stack.ingestURL)/v1/me/notifications/\(id)", bearer: try await setup.app.userToken(setup.user),
                json: Data(#"{"userActionState":"dismissed"}"#.utf8), headers: ["X-Subscription-Id": phone.subscriptionId])
            #expect(dismissed.status == 200, "PATCH answered \(dismissed.status): \(dismissed.text)")

            let deliveries = try await ProviderSandbox.waitForDeliveries("wns", to: setup.token) { $0.count >= 3 }
            try #require(deliveries.count == 3, "expected the toast, the clearing DELETE and a raw push; got \(deliveries.count)")
            let (clear, raw) = (deliveries[1], deliveries[2])
            #expect(clear.headers["x-wns-match"] == "type:wns/toast;tag=\(id)", "the toast named by its tag, whatever its group")
            #expect(clear.payload == .null)
            #expect(raw.headers["x-wns-type"] == "wns/raw")
            #expect(raw.headers["content-type"] == "application/octet-stream")
            let body = try #require(raw.payload.stringValue.map { Data($0.utf8) })
            let tap = try WireCoding.makeDecoder().decode(JSONValue.self, from: body)
            #expect(tap["notify"]?["id"]?.stringValue == id)
            #expect(tap["notify"]?["kind"]?.stringValue == "stateChanged")
        }

        @Test("404 and 410 remove the subscription", arguments: [404, 410])
        func goneChannelIsRemoved(status: Int) async throws {
            let setup = try await setUp()
            try await ProviderSandbox.fault("wns", token: setup.token, status: status)
            let id = try await setup.app.publishAccepted(.alert(to: setup.user))

            #expect(try await !Database.subscriptionExists(setup.subscriptionId, of: setup.app.appId, expecting: false), "the subscription was not removed")
            #expect(try await setup.app.deliveryLog(of: id) { !$0.isEmpty }.map(\.result) == ["tokenInvalid"])
        }

        @Test("406 throttled with Retry-After 1, and 503: retried through a retry queue, then delivered", arguments: [406, 503])
        func throttledIsRetried(status: Int) async throws {
            let setup = try await setUp()
            try await ProviderSandbox.fault("wns", token: setup.token, status: status, retryAfter: 1)
            let id = try await setup.app.publishAccepted(.alert(to: setup.user))

            #expect(try await ProviderSandbox.waitForDeliveries("wns", to: setup.token).count == 1, "the retried push did not arrive within 20 s")
            let log = try await setup.app.deliveryLog(of: id) { $0.contains { $0.result == "accepted" } }
            #expect(log.map(\.result) == ["retrying", "accepted"])
            #expect(log.first?.status == status)
        }

        @Test("401 once: a new access token, then delivered without flagging anything")
        func refusedAccessTokenIsRenewed() async throws {
            let setup = try await setUp()
            try await ProviderSandbox.fault("wns", token: setup.token, status: 401)
            let id = try await setup.app.publishAccepted(.alert(to: setup.user))

            #expect(try await ProviderSandbox.waitForDeliveries("wns", to: setup.token).count == 1, "not delivered after the token was renewed")
            #expect(try await setup.app.deliveryLog(of: id) { !$0.isEmpty }.map(\.result) == ["accepted"])
            #expect(try await Database.credentialsRejection(appId: setup.app.appId, provider: "wns", timeout: .zero) == nil)
        }

        @Test("400 and 413: dead-lettered, logged as failed, nothing delivered, the subscription kept", arguments: [400, 413])
        func badRequestFails(status: Int) async throws {
            let setup = try await setUp()
            try await ProviderSandbox.fault("wns", token: setup.token, status: status)
            let id = try await setup.app.publishAccepted(.alert(to: setup.user))

            #expect(try await setup.app.deliveryLog(of: id) { !$0.isEmpty }.map(\.result) == ["failed"])
            #expect(try await deliveriesAfterQuietPeriod("wns", to: setup.token).isEmpty, "a failed push was delivered")
            #expect(try await Database.subscriptionExists(setup.subscriptionId, of: setup.app.appId, expecting: true))
        }

        @Test("a wrong client secret (invalid_client from the token endpoint): credentials flagged, the subscription kept")
        func refusedCredentialsAreFlagged() async throws {
            let setup = try await setUp(clientSecret: "not-the-secret")
            let id = try await setup.app.publishAccepted(.alert(to: setup.user))

            #expect(try await setup.app.deliveryLog(of: id) { !$0.isEmpty }.map(\.result) == ["credentialsRejected"])
            #expect(try await Database.credentialsRejection(appId: setup.app.appId, provider: "wns") != nil, "the credentials were not flagged")
            #expect(try await Database.subscriptionExists(setup.subscriptionId, of: setup.app.appId, expecting: true))
        }
    }
}
