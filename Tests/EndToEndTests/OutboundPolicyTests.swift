import Foundation
import NotifyModels
import NotifyStore
import Testing

extension EndToEndTests {
    /// A tenant or a device naming a URL the service would call: nothing beyond the push services and the public
    /// internet is taken, except what the operator admits (the test stack admits its sandbox's ports, by host and
    /// port). Nothing here leaves the loopback: the URLs refused are never called, and the ones taken are the sandbox's.
    @Suite("the outbound address policy, attacked")
    struct OutboundPolicyTests {
        /// The sandbox control API's port, which the stack admits on 127.0.0.1 only.
        private static let controlPort = URLComponents(string: Stack.sandboxURL)?.port ?? 22090

        /// Loopback, private, link-local and metadata URLs the stack does not admit: other ports, other spellings.
        private static let refusedURLs = [
            "http://127.0.0.1:\(controlPort + 7)/hook", "http://[::1]:\(controlPort)/hook", "http://127.1.2.3:\(controlPort)/hook",
            "http://localhost:\(controlPort + 7)/hook", "http://[::ffff:127.0.0.1]:\(controlPort + 7)/", "http://169.254.169.254/latest/meta-data/",
            "http://10.0.0.1/hook", "http://192.168.1.1/", "http://100.64.0.1/", "http://[fd00::1]/", "http://0.0.0.0:\(controlPort)/",
            "http://2130706433:\(controlPort + 7)/",
        ]

        @Test("webhook and poll-source URLs on loopback, private and metadata addresses are refused naming url")
        func tenantURLsRefused() async throws {
            let app = try await TestApp.create()
            for url in Self.refusedURLs {
                expectAPIError(
                    try await StackClient.send(
                        .PUT, "\(Stack.ingestURL)/v1/apps/\(app.appId)/webhook", bearer: app.apiKey, json: StackClient.encode(WebhookRequest(url: url))),
                    status: 400, code: "invalid_field", field: "url", "webhook \(url)")
                expectAPIError(
                    try await StackClient.send(
                        .PUT, "\(Stack.ingestURL)/v1/apps/\(app.appId)/poll-sources/feed", bearer: app.apiKey,
                        json: StackClient.encode(PollSourceRequest(url: url))),
                    status: 400, code: "invalid_field", field: "url", "poll source \(url)")
            }
            // The sandbox's receiver, which the stack admits, is taken.
            let admitted = try await StackClient.send(
                .PUT, "\(Stack.ingestURL)/v1/apps/\(app.appId)/webhook", bearer: app.apiKey,
                json: StackClient.encode(WebhookRequest(url: "\(Stack.sandboxURL)/receivers/admitted-\(uniqueSuffix())")))
            #expect(admitted.status == 201, "\(admitted.text)")
        }

        @Test("provider endpoint overrides on refused addresses are refused naming their field")
        func providerEndpointsRefused() async throws {
            let app = try await TestApp.create()
            struct WNS: Encodable {
                var packageSid = "ms-app://s-1-15-2-1"
                var clientSecret = "secret"
                var tokenURL: String
            }
            expectAPIError(
                try await StackClient.send(
                    .PUT, "\(Stack.ingestURL)/v1/apps/\(app.appId)/providers/wns", bearer: Stack.adminToken,
                    json: StackClient.encode(WNS(tokenURL: "https://127.0.0.1:\(Self.controlPort + 7)/token"))),
                status: 400, code: "invalid_field", field: "tokenURL", "a WNS token URL on the loopback")
        }

        @Test("a WNS channel or Web Push endpoint outside the push services is refused naming pushToken")
        func pushEndpointsRefused() async throws {
            let app = try await TestApp.create()
            let token = try await app.userToken("stranger-\(uniqueSuffix())")
            let keys = WebPushKeys(p256dh: "BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM", auth: "tBHItJI5svbpez7KI4CCXg")
            for (platform, url) in [
                (Platform.wns, "https://attacker.example/x"), (.wns, "https://notify.windows.com.attacker.example/x"),
                (.wns, "https://localhost:\(Self.controlPort + 7)/wns"), (.wns, "https://169.254.169.254/"),
                (.webpush, "https://attacker.example/push"), (.webpush, "https://127.0.0.1:\(Self.controlPort)/push"),
            ] {
                expectAPIError(
                    try await app.registerDevice(
                        SubscriptionRequest(platform: platform, pushToken: url, keys: platform == .webpush ? keys : nil), token: token),
                    status: 400, code: "invalid_field", field: "pushToken", "\(platform.rawValue) \(url)")
            }
        }

        @Test("a WNS channel outside the push services that was stored before the rule is never pushed: its push fails, naming why")
        func storedOutsideTheRuleNeverPushed() async throws {
            let app = try await TestApp.create()
            let user = "stored-\(uniqueSuffix())"
            let subscriptionId = UUID()
            // As registered before the rule existed: written by storage's command applier, as storage wrote it then.
            _ = try await Database.withClient { client in
                try await CommandBatchApplier(client: client, logger: testLogger).apply([StorageCommand(action: .registerSubscription(DeviceSubscription(
                    subscriptionId: subscriptionId, appId: app.appId, userId: user, platform: .wns, pushToken: "https://attacker.example/channel",
                    appPackage: nil, displayName: nil, expirationDateTime: Date().addingTimeInterval(86_400), registeredAt: Date())))])
            }
            let id = try await app.publishAccepted(.alert(to: user))
            let entries = try await app.deliveryLog(of: id) { entries in entries.contains { $0.result == "failed" } }
            let entry = try #require(entries.first { $0.subscriptionId == subscriptionId.lowercasedString }, "no delivery logged: \(entries)")
            #expect(entry.result == "failed" && entry.status == nil, "\(entry)")
            #expect(entry.reason?.contains("not a WNS host") == true, "\(entry.reason ?? "")")
        }

        @Test("a redirect from an admitted receiver is not followed: the event is not delivered there or anywhere else",
              .timeLimit(.minutes(2)))
        func redirectNotFollowed() async throws {
            struct ReceiverLog: Decodable {
                var received: [JSONValue]
                var redirected: Int?
            }
            let app = try await TestApp.create()
            let target = "\(Stack.sandboxURL)/receivers/target-\(uniqueSuffix())"
            let redirecting = "\(Stack.sandboxURL)/receivers/redirecting-\(uniqueSuffix())"
            #expect(try await StackClient.send(.PUT, target).status == 204)
            let location = target.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? target
            #expect(try await StackClient.send(.PUT, "\(redirecting)?redirect=\(location)").status == 204)
            let put = try await StackClient.send(
                .PUT, "\(Stack.ingestURL)/v1/apps/\(app.appId)/webhook", bearer: app.apiKey, json: StackClient.encode(WebhookRequest(url: redirecting)))
            #expect(put.status == 201, "\(put.text)")
            _ = try await app.registerDevice(of: "redirected-\(uniqueSuffix())")
            // The attempt is answered 307 and logged failed (a 3xx is not retried), and the target never hears of it.
            var attempts: [WebhookAttempt] = []
            let deadline = ContinuousClock.now + .seconds(60)
            while attempts.isEmpty && ContinuousClock.now < deadline {
                struct Log: Decodable { var deliveries: [WebhookAttempt] }
                attempts = try await StackClient.send(.GET, "\(Stack.ingestURL)/v1/apps/\(app.appId)/webhook/deliveries", bearer: app.apiKey)
                    .decode(Log.self).deliveries
                if attempts.isEmpty { try await Task.sleep(for: .milliseconds(200)) }
            }
            #expect(attempts.first?.status == 307 && attempts.first?.result == "failed", "\(attempts)")
            #expect(try await StackClient.send(.GET, redirecting).decode(ReceiverLog.self).redirected ?? 0 >= 1)
            #expect(try await StackClient.send(.GET, target).decode(ReceiverLog.self).received.isEmpty)
        }
    }
}
