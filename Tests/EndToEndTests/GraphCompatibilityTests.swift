import Foundation
import NotifyModels
import NotifyStore
import NotifyTestSupport
import Testing

extension EndToEndTests {
    @Suite("Graph compatibility: Graph's documented create-notification bodies, posted to notify, reach the user's devices")
    struct GraphCompatibilityTests {
        /// An app with WNS and FCM credentials besides its APNs key, and a user with an iPhone, a Windows PC and an
        /// Android phone.
        private struct Setup {
            var app: TestApp
            var user: String
            var iPhone: String
            /// The Windows channel's id (its URI's last path segment), as the sandbox records deliveries.
            var windows: String
            var android: String

            /// Graph's create, as an app server moved from Graph sends it: the base URL, the token and the user segment changed.
            func create(_ body: String) async throws -> HTTPAnswer {
                try await StackClient.send(
                    .POST, "\(Stack.ingestURL)/v1/apps/\(app.appId)/graph/users/\(user)/notifications", bearer: app.apiKey, json: Data(body.utf8))
            }
        }

        private func setUp() async throws -> Setup {
            let app = try await TestApp.create()
            let wns = try await ProviderSandbox.wnsAppAndChannel()
            try await app.storeWNSCredentials(packageSid: wns.clientId, clientSecret: wns.clientSecret)
            try await app.storeFCMCredentials()
            let user = "graph-user-\(uniqueSuffix())"
            let iPhone = try await app.registerDevice(of: user)
            _ = try await app.registerDevice(of: user, platform: .wns, pushToken: wns.channelUri)
            let android = "e2e:\(randomHex(bytes: 24))"
            _ = try await app.registerDevice(of: user, platform: .fcm, pushToken: android)
            return Setup(
                app: app, user: user, iPhone: iPhone, windows: String(try #require(wns.channelUri.split(separator: "/").last)), android: android)
        }

        @Test("the visual example: 201 with Graph's resource; a toast on Windows in TestGroup for at most 60 s, an alert on the iPhone, a notification on Android")
        func visualExampleReachesEveryPlatform() async throws {
            let setup = try await setUp()
            let expiration = GraphNotificationExamples.expiration()
            let answer = try await setup.create(GraphNotificationExamples.visual(expiring: expiration))
            #expect(answer.status == 201, "\(answer.text)")
            let resource = try answer.decode(JSONValue.self)
            let id = try #require(resource["id"]?.stringValue)
            #expect(resource["@odata.type"]?.stringValue == "#microsoft.graph.notification")
            #expect(resource["appNotificationId"]?.stringValue == "testDirectToastNotification" && resource["groupName"]?.stringValue == "TestGroup")
            #expect(resource["targetHostName"]?.stringValue == "graphnotifications.sample.windows.com")
            #expect(resource["targetPolicy"]?["platformTypes"] == .array([.string("windows"), .string("ios"), .string("android")]))
            #expect(resource["payload"]?["visualContent"]?["title"]?.stringValue == "Hello World!")
            #expect(resource["displayTimeToLive"]?.intValue == 60 && resource["priority"]?.stringValue == "High")
            #expect(resource["expirationDateTime"]?.stringValue.flatMap(WireCoding.parseTimestamp) == expiration)

            let toast = try #require(try await ProviderSandbox.waitForDeliveries("wns", to: setup.windows).first, "no toast on Windows")
            #expect(toast.headers["x-wns-type"] == "wns/toast" && toast.headers["x-wns-tag"] == id)
            #expect(toast.headers["x-wns-group"] == "TestGroup")
            let ttl = try #require(toast.headers["x-wns-ttl"].flatMap(Int.init))
            #expect(ttl > 0 && ttl <= 60, "X-WNS-TTL \(ttl): displayTimeToLive bounds it")
            let xml = try #require(toast.payload.stringValue)
            #expect(xml.contains("<text>Hello World!</text>") && xml.contains("<text>Notifications are Great!</text>"), "\(xml)")

            let alert = try #require(try await Sandbox.waitForDeliveries(to: setup.iPhone) { !$0.isEmpty }.first, "no alert on the iPhone")
            #expect(alert.notificationId == id)
            #expect(alert.payload["aps"]?["alert"]?["title"]?.stringValue == "Hello World!")
            #expect(alert.payload["aps"]?["alert"]?["body"]?.stringValue == "Notifications are Great!")
            #expect(alert.headers["apns-priority"] == "10")

            let message = try #require(try await ProviderSandbox.waitForDeliveries("fcm", to: setup.android).first, "nothing on Android").payload
            #expect(message["notification"]?["title"]?.stringValue == "Hello World!" && message["data"]?["notifyId"]?.stringValue == id)

            // In the user's feed as Graph kept it in the notification history.
            let stored = try await StackClient.send(.GET, "\(Stack.ingestURL)/v1/me/notifications/\(id)", bearer: try await setup.app.userToken(setup.user))
            let view = try stored.decode(NotificationView.self)
            #expect(view.appNotificationId == "testDirectToastNotification" && view.groupName == "TestGroup" && view.expirationDateTime == expiration)
        }

        @Test("the raw example: 201 with the raw content; a raw push carrying it on Windows, and nothing on the iPhone or Android (Windows only)")
        func rawExampleReachesWindowsOnly() async throws {
            let setup = try await setUp()
            let answer = try await setup.create(GraphNotificationExamples.raw)
            #expect(answer.status == 201, "\(answer.text)")
            let resource = try answer.decode(JSONValue.self)
            let id = try #require(resource["id"]?.stringValue)
            #expect(resource["payload"] == .object(["rawContent": .string("Aren't Notifications the best??!!")]))
            #expect(resource["targetPolicy"]?["platformTypes"] == .array([.string("windows")]))

            let raw = try #require(try await ProviderSandbox.waitForDeliveries("wns", to: setup.windows).first, "no raw push on Windows")
            #expect(raw.headers["x-wns-type"] == "wns/raw")
            let body = try #require(raw.payload.stringValue.map { Data($0.utf8) })
            let tap = try WireCoding.makeDecoder().decode(JSONValue.self, from: body)
            #expect(tap["notify"]?["id"]?.stringValue == id)
            #expect(tap["rawContent"]?.stringValue == "Aren't Notifications the best??!!", "\(tap)")
            #expect(try await deliveriesAfterQuietPeriod("apns", to: setup.iPhone, duration: .seconds(1)).isEmpty, "the iPhone was pushed")
            #expect(try await ProviderSandbox.deliveries("fcm", to: setup.android).isEmpty, "Android was pushed")
        }

        @Test("a Graph body notify cannot honour is refused naming Graph's field, and nothing reaches the user")
        func refusalNamesGraphsField() async throws {
            let setup = try await setUp()
            expectAPIError(
                try await setup.create(#"{"payload":{"rawContent":"x"},"fallbackPolicy":{"platformTypes":["ios"],"fallbackDelayInSeconds":60}}"#),
                status: 400, code: "invalid_field", field: "fallbackPolicy", "Graph's iOS fallback")
            expectAPIError(
                try await setup.create(#"{"payload":{"rawContent":"x"},"targetPolicy":{"platformTypes":["xbox"]}}"#),
                status: 400, code: "invalid_field", field: "targetPolicy.platformTypes[0]", "a platform Graph does not have")
            let feed = try await StackClient.send(.GET, "\(Stack.ingestURL)/v1/me/notifications", bearer: try await setup.app.userToken(setup.user))
            #expect(try feed.decode(HistoryPage.self).notifications.isEmpty)
        }
    }
}
