import Foundation
import NotifyModels
import Testing

extension EndToEndTests {
    @Suite("APNs token feedback and retries that survive a crash", .serialized)
    struct ProviderAPNsTests {
        @Test("every push option arrives where the README's table puts it on APNs: aps alert keys, sound, category, thread-id, mutable-content, interruption level, relevance, the image for the extension")
        func pushOptionsAreMapped() async throws {
            let app = try await TestApp.create()
            let user = "user-\(uniqueSuffix())"
            let token = try await app.registerDevice(of: user)
            _ = try await app.publishAccepted(.alert(to: user, push: .everyOption))
            let payload = try #require(try await Sandbox.waitForDeliveries(to: token) { !$0.isEmpty }.first?.payload)
            let aps = try #require(payload["aps"])
            let alert = try #require(aps["alert"])
            #expect(alert["title"]?.stringValue == "Order shipped" && alert["body"]?.stringValue == "On its way")
            #expect(alert["subtitle"]?.stringValue == "Order 42")
            #expect(alert["title-loc-key"]?.stringValue == "SHIPPED_TITLE" && alert["title-loc-args"] == .array([.string("42")]))
            #expect(alert["loc-key"]?.stringValue == "SHIPPED_BODY" && alert["loc-args"] == .array([.string("Ana"), .string("Tuesday")]))
            #expect(alert["launch-image"]?.stringValue == "Parcel")
            #expect(aps["sound"]?.stringValue == "chime.caf")
            #expect(aps["category"]?.stringValue == "OPEN_ORDER")
            #expect(aps["thread-id"]?.stringValue == "orders")
            #expect(aps["mutable-content"]?.intValue == 1)
            #expect(aps["interruption-level"]?.stringValue == "time-sensitive")
            #expect(aps["relevance-score"]?.numberValue == 0.75)
            #expect(aps["content-available"]?.intValue == 1)
            #expect(payload["imageUrl"]?.stringValue == "https://cdn.example.com/parcel.png")
            #expect(payload["data"]?["orderId"]?.stringValue == "42")

            #expect(payload["notify"]?["url"] == nil && aps["target-content-id"] == nil, "no deep link given")

            // A critical alert's sound is a dictionary.
            let critical = try await app.registerDevice(of: "critical-\(user)")
            _ = try await app.publishAccepted(.alert(to: "critical-\(user)", push: PushOptions(sound: "siren.caf", criticalSound: true, interruptionLevel: .critical)))
            let sound = try #require(try await Sandbox.waitForDeliveries(to: critical) { !$0.isEmpty }.first?.payload["aps"]?["sound"])
            #expect(sound == .object(["critical": .number(1), "name": .string("siren.caf"), "volume": .number(1)]))
        }

        @Test("the app's data under data, whatever its names (category, title, aps, notify); the deep link as aps.target-content-id and notify.url")
        func appDataAndDeepLink() async throws {
            let app = try await TestApp.create()
            let user = "user-\(uniqueSuffix())"
            let token = try await app.registerDevice(of: user)
            _ = try await app.publishAccepted(.alert(to: user, push: .appDataAndLink))
            let payload = try #require(try await Sandbox.waitForDeliveries(to: token) { !$0.isEmpty }.first?.payload)
            #expect(payload["data"] == .object(PushOptions.appDataOfEveryName))
            #expect(payload["category"] == nil && payload["title"] == nil, "the top level is APNs' and notify's")
            let aps = try #require(payload["aps"])
            #expect(aps["category"]?.stringValue == "OPEN_ORDER" && aps["sound"]?.stringValue == "chime.caf")
            #expect(aps["alert"]?["title"]?.stringValue == "Order shipped")
            #expect(aps["target-content-id"]?.stringValue == "https://shop.example.com/orders/42?tab=tracking")
            #expect(payload["notify"]?["url"]?.stringValue == "https://shop.example.com/orders/42?tab=tracking")
        }

        @Test("an app with a second identity (a watch app): its devices are pushed with that identity's key and topic, the others with the app's default ones")
        func appIdentities() async throws {
            struct Credentials: Encodable {
                var teamId: String
                var keyId: String
                var privateKey: String
                var topic: String
                var environment = "sandbox"
                var endpoint = Stack.sandboxAPNsURL
            }
            let app = try await TestApp.create()
            let watchKey = try await Sandbox.newKey(topic: app.topic + ".watchkitapp")
            SecretsUsed.record(watchKey.privateKey.split(separator: "\n").filter { !$0.hasPrefix("-----") }.map(String.init))
            let stored = try await StackClient.send(
                .PUT, "\(Stack.ingestURL)/v1/apps/\(app.appId)/providers/apns?appPackage=com.example.watch", bearer: Stack.adminToken,
                json: StackClient.encode(Credentials(teamId: watchKey.teamId, keyId: watchKey.keyId, privateKey: watchKey.privateKey, topic: watchKey.topic)))
            #expect(stored.status == 200 && stored.text.contains(#""appPackage":"com.example.watch""#), "\(stored.text)")

            let user = "user-\(uniqueSuffix())"
            let phone = try await app.registerDevice(of: user)
            let watch = randomHex(bytes: 32)
            let registered = try await app.registerDevice(
                SubscriptionRequest(platform: .apns, pushToken: watch, appPackage: "com.example.watch"), token: try await app.userToken(user))
            #expect(registered.status == 201, "\(registered.text)")
            _ = try await app.publishAccepted(.alert(to: user, title: "on both"))
            let phonePush = try #require(try await Sandbox.waitForDeliveries(to: phone) { !$0.isEmpty }.first)
            let watchPush = try #require(try await Sandbox.waitForDeliveries(to: watch) { !$0.isEmpty }.first)
            #expect(phonePush.headers["apns-topic"] == app.topic)
            #expect(watchPush.headers["apns-topic"] == watchKey.topic, "the watch's push is sent (and signed) with the watch identity's credentials")
        }

        @Test("410 Unregistered with a timestamp older than the registration leaves the subscription; a newer one removes it")
        func unregisteredTimestampRule() async throws {
            let app = try await TestApp.create()
            let user = "user-\(uniqueSuffix())"
            let device = try await app.registerSubscribedDevice(of: user)

            // Apple says the token stopped being valid an hour ago: the device registered again since.
            try await ProviderSandbox.fault("apns", token: device.pushToken, status: 410, timestamp: Date().addingTimeInterval(-3600))
            let stale = try await app.publishAccepted(.alert(to: user, title: "stale 410"))
            #expect(try await app.deliveryLog(of: stale) { !$0.isEmpty }.map(\.result) == ["tokenInvalid"])
            #expect(try await Database.subscriptionExists(device.subscriptionId, of: app.appId, expecting: false, timeout: .seconds(2)), "removed on a 410 older than the registration")

            try await Task.sleep(for: .milliseconds(100))
            try await ProviderSandbox.fault("apns", token: device.pushToken, status: 410, timestamp: Date())
            let current = try await app.publishAccepted(.alert(to: user, title: "current 410"))
            #expect(try await app.deliveryLog(of: current) { !$0.isEmpty }.map(\.result) == ["tokenInvalid"])
            #expect(try await !Database.subscriptionExists(device.subscriptionId, of: app.appId, expecting: false), "not removed on a 410 newer than the registration")
        }

        @Test("400 BadExpirationDate (a request bug): dead-lettered with the reason, logged as failed, the subscription kept")
        func requestBugIsDeadLettered() async throws {
            let app = try await TestApp.create()
            let user = "user-\(uniqueSuffix())"
            let device = try await app.registerSubscribedDevice(of: user)
            try await ProviderSandbox.fault("apns", token: device.pushToken, status: 400, reason: "BadExpirationDate")
            let id = try await app.publishAccepted(.alert(to: user, title: "never delivered"))

            let log = try await app.deliveryLog(of: id) { !$0.isEmpty }
            #expect(log.map(\.result) == ["failed"])
            #expect(log.first?.reason == "BadExpirationDate")
            let dead = try await Broker.deadPushJobs("apns", notificationId: id)
            #expect(dead.count == 1, "the push is not in push.apns.dead")
            #expect(dead.first?.reason?.contains("BadExpirationDate") == true, "x-notify-reason: \(dead.first?.reason ?? "missing")")
            #expect(dead.first?.job.deviceToken == device.pushToken)
            #expect(try await Database.subscriptionExists(device.subscriptionId, of: app.appId, expecting: true))
        }

        @Test("403 InvalidProviderToken: credentials flagged and counted in /metrics, no token removed; new credentials deliver again")
        func refusedProviderTokenFlagsCredentials() async throws {
            let app = try await TestApp.create()
            let user = "user-\(uniqueSuffix())"
            let device = try await app.registerSubscribedDevice(of: user)
            let flaggedBefore = try await Metrics.value("notify_credentials_refused_total", labels: ["provider": "apns"], service: .storage)
            try await ProviderSandbox.fault("apns", token: device.pushToken, status: 403, reason: "InvalidProviderToken")
            let refused = try await app.publishAccepted(.alert(to: user, title: "refused"))

            let log = try await app.deliveryLog(of: refused) { !$0.isEmpty }
            #expect(log.map(\.result) == ["credentialsRejected"])
            #expect(try await Database.credentialsRejection(appId: app.appId, provider: "apns") == "InvalidProviderToken")
            #expect(try await Database.subscriptionExists(device.subscriptionId, of: app.appId, expecting: true), "a credentials problem removed a token")
            let flaggedAfter = try await Metrics.value("notify_credentials_refused_total", labels: ["provider": "apns"], service: .storage)
            #expect(flaggedAfter == flaggedBefore + 1, "storage's notify_credentials_refused_total went from \(flaggedBefore) to \(flaggedAfter)")

            // The operator stores a new key: the flag is cleared and pushes flow again.
            try await app.replaceAPNsKey()
            #expect(try await Database.credentialsRejection(appId: app.appId, provider: "apns", timeout: .zero) == nil)
            let delivered = try await app.publishAccepted(.alert(to: user, title: "after the new key"))
            #expect(try await Sandbox.missingNotifications([delivered], at: device.pushToken).isEmpty, "not delivered with the new key")
        }

        @Test("a PushKit token gets only calls (platformTypes names apns-voip) as voip pushes on the .voip topic, and no state changes")
        func voipPushes() async throws {
            let app = try await TestApp.create()
            let user = "user-\(uniqueSuffix())"
            let phone = try await app.registerSubscribedDevice(of: user)
            let voipToken = randomHex(bytes: 32)
            _ = try await app.registerDevice(of: user, platform: .apnsVoip, pushToken: voipToken)

            let ordinary = try await app.publishAccepted(.alert(to: user, title: "an ordinary alert"))
            #expect(try await Sandbox.missingNotifications([ordinary], at: phone.pushToken).isEmpty)

            var call = NotificationRequest.alert(to: user, title: "Incoming call", body: "Ada")
            call.targetPolicy = TargetPolicy(platformTypes: [.apnsVoip])
            call.payload?.rawContent = "call-42"
            let callId = try await app.publishAccepted(call)
            let push = try #require(try await Sandbox.waitForDeliveries(to: voipToken) { !$0.isEmpty }.first, "the PushKit token got no call")
            #expect(push.notificationId == callId)
            #expect(push.headers["apns-push-type"] == "voip")
            #expect(push.headers["apns-topic"] == app.topic + ".voip")
            #expect(push.headers["apns-priority"] == "10")
            #expect(push.payload["aps"] == .object([:]), "a VoIP payload's aps is empty: iOS shows nothing, the app reports the call")
            #expect(push.payload["alert"]?["title"]?.stringValue == "Incoming call")
            #expect(push.payload["rawContent"]?.stringValue == "call-42")

            // The phone answers the call: the dismiss is not pushed to the PushKit token.
            try await app.user(user).patchAccepted(callId, StateChangeRequest(userActionState: .dismissed), from: phone.subscriptionId)
            let voipDeliveries = try await deliveriesAfterQuietPeriod("apns", to: voipToken)
            #expect(voipDeliveries.map(\.notificationId) == [callId], "the PushKit token got more than the call")
            #expect(try await Sandbox.deliveries(to: phone.pushToken).map(\.notificationId) == [ordinary], "the alert token got the call")
        }

        @Test("a Retry-After given as an HTTP-date (RFC 9110) is honoured: the retry waits until then")
        func retryAfterDateIsHonoured() async throws {
            let app = try await TestApp.create()
            let user = "user-\(uniqueSuffix())"
            let phone = try await app.registerDevice(of: user)
            try await ProviderSandbox.fault("apns", token: phone, status: 503, retryAfter: 4, retryAfterAsDate: true)
            let published = Date()
            let id = try await app.publishAccepted(.alert(to: user, title: "after the date"))
            #expect(try await Sandbox.missingNotifications([id], at: phone, timeout: .seconds(30)).isEmpty, "the retry was delivered")
            let receivedAt = try await Sandbox.deliveries(to: phone).first?.receivedAt
                .flatMap { try? Date($0, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) }
            let waited = try #require(receivedAt).timeIntervalSince(published)
            // The date is 4 s after the fault was made, to the second: at least 3 s. Read as nothing, the retry came after 1 s.
            #expect(waited >= 3, "the retry came \(waited) s after the publish")
        }

        @Test("push-dispatch SIGKILLed while pushes wait in a retry queue: once started again, they are delivered")
        func retryBacklogSurvivesAKill() async throws {
            try await Services.restoringAll {
                let app = try await TestApp.create()
                try await app.storeFCMCredentials()
                let user = "user-\(uniqueSuffix())"
                let phone = try await app.registerDevice(of: user)
                let android = "e2e:\(randomHex(bytes: 24))"
                _ = try await app.registerDevice(of: user, platform: .fcm, pushToken: android)
                // Retry-After 5 puts both retries in the 5 s retry queue, long enough to kill push-dispatch meanwhile.
                try await ProviderSandbox.fault("apns", token: phone, status: 503, retryAfter: 5)
                try await ProviderSandbox.fault("fcm", token: android, status: 503, reason: "UNAVAILABLE", retryAfter: 5)
                let id = try await app.publishAccepted(.alert(to: user, title: "retried across a crash"))

                let log = try await app.deliveryLog(of: id) { $0.filter { $0.result == "retrying" }.count == 2 }
                try #require(log.filter { $0.result == "retrying" }.count == 2, "the first attempts were not logged as retrying: \(log.map(\.result))")
                try await Services.control("kill", ["push-dispatch"])
                try await Task.sleep(for: .seconds(6))
                try await Services.control("start", ["push-dispatch"])

                #expect(try await Sandbox.missingNotifications([id], at: phone, timeout: .seconds(30)).isEmpty, "the APNs retry was lost")
                #expect(try await ProviderSandbox.waitForDeliveries("fcm", to: android, timeout: .seconds(30)).count == 1, "the FCM retry was lost")
            }
        }
    }
}
