import Crypto
import Foundation
import NotifyModels
import NotifyStore
import Testing

extension EndToEndTests {
    /// One app's big broadcast, or its slow provider, beside another app's one-to-one notification.
    @Suite("pushes among apps")
    struct PushFairnessTests {
        private struct Batch: Encodable {
            var notifications: [NotificationRequest]
        }

        /// A device of a new user of `app` on `provider` (APNs: its own connections per app key; Web Push: a subscription at
        /// the sandbox's push service, one host for every app); answers the user and the token faults and deliveries name.
        private static func device(of app: TestApp, on provider: String) async throws -> (user: String, token: String) {
            let user = "\(provider)-\(uniqueSuffix())"
            guard provider == "webpush" else { return (user, try await app.registerDevice(of: user)) }
            struct Credentials: Encodable {
                var vapidPrivateKey: String
                var subject = "mailto:e2e@example.com"
            }
            let stored = try await app.storeCredentials("webpush", Credentials(vapidPrivateKey: P256.Signing.PrivateKey().pemRepresentation))
            let subscription = try await ProviderSandbox.webPushSubscription(
                applicationServerKey: try #require(stored["vapidPublicKey"]?.stringValue, "PUT answered no vapidPublicKey"))
            _ = try await app.registerDevice(of: user, platform: .webpush, pushToken: subscription.endpoint, keys: subscription.keys)
            return (user, String(try #require(subscription.endpoint.split(separator: "/").last)))
        }

        /// The notifications pushed to the token so far.
        private static func pushed(_ provider: String, to token: String) async throws -> Set<String> {
            Set(try await ProviderSandbox.deliveries(provider, to: token).compactMap(\.notificationId))
        }

        @Test("a provider that answers one app late holds only that app's pushes, and none of them is lost",
              .timeLimit(.minutes(4)), arguments: ["apns", "webpush"])
        func slowProviderHoldsOnlyItsApp(provider: String) async throws {
            let slow = try await TestApp.create()
            let (slowUser, slowToken) = try await Self.device(of: slow, on: provider)
            // Every push to the slow app's device is answered 6 s late.
            try await ProviderSandbox.fault(provider, token: slowToken, delayMilliseconds: 6000, times: nil)
            // 300 notifications in 60 requests: many push-job messages, more than an app's share of the pushes in flight.
            var slowIds: Set<String> = []
            for round in 0..<60 {
                let answer = try await slow.publish(Batch(notifications: (0..<5).map { .alert(to: slowUser, title: "slow \(round).\($0)") }))
                #expect(answer.status == 202, "\(answer.text)")
                struct Accepted: Decodable {
                    struct Result: Decodable { var id: String? }
                    var results: [Result]
                }
                slowIds.formUnion(try answer.decode(Accepted.self).results.compactMap(\.id))
            }
            #expect(slowIds.count == 300)
            // Its pushes are in flight (and waiting) now.
            try await Task.sleep(for: .seconds(2))

            let quiet = try await TestApp.create()
            let (quietUser, quietToken) = try await Self.device(of: quiet, on: provider)
            let published = ContinuousClock.now
            let quietId = try await quiet.publishAccepted(.alert(to: quietUser))
            var quietPushed = try await Self.pushed(provider, to: quietToken)
            while !quietPushed.contains(quietId), ContinuousClock.now - published < .seconds(60) {
                try await Task.sleep(for: .milliseconds(50))
                quietPushed = try await Self.pushed(provider, to: quietToken)
            }
            let waited = ContinuousClock.now - published
            #expect(quietPushed.contains(quietId), "the other app's notification was not pushed")
            // Behind the slow app's pushes it would wait at least one of their 6 s answers.
            #expect(waited < .seconds(4), "the other app's push waited \(waited) beside the slow app's")

            // The slow app's pushes all arrive, those set aside while its share was taken included.
            var slowPushed = try await Self.pushed(provider, to: slowToken)
            while !slowIds.isSubset(of: slowPushed), ContinuousClock.now - published < .seconds(150) {
                try await Task.sleep(for: .milliseconds(500))
                slowPushed = try await Self.pushed(provider, to: slowToken)
            }
            #expect(slowIds.isSubset(of: slowPushed), "\(slowIds.subtracting(slowPushed).count) of the slow app's 300 notifications were not pushed")
        }

        @Test("a one-to-one notification does not wait for another app's broadcast to a big audience", .timeLimit(.minutes(4)))
        func broadcastDoesNotHoldOneToOne() async throws {
            let broadcaster = try await TestApp.create()
            let source = "crowd-\(uniqueSuffix())"
            let defined = try await StackClient.send(
                .POST, "\(Stack.ingestURL)/v1/apps/\(broadcaster.appId)/event-sources", bearer: broadcaster.apiKey,
                json: StackClient.encode(EventSourceRequest(name: source, policy: .open)))
            #expect(defined.status == 201, "\(defined.text)")
            // 50,000 members straight into PostgreSQL; the one in the middle of the audience's order is watched.
            let members = 50_000
            let middle = try await Database.withClient { client in
                try await EventSourceAudience.seed(members, userPrefix: "crowd-", of: source, in: broadcaster, on: client)
                let audience = try await EventSourceAudience.members(of: source, in: broadcaster, on: client)
                try #require(audience.count == members, "the audience as a broadcast pages through it")
                return audience[members / 2].pushToken
            }
            let quiet = try await TestApp.create()
            let quietUser = "quiet-\(uniqueSuffix())"
            let quietToken = try await quiet.registerDevice(of: quietUser)

            _ = try await broadcaster.publishAccepted(
                NotificationRequest(eventSource: source, payload: NotificationPayload(visualContent: VisualContent(title: "To all", body: "a crowd"))))
            // The other app publishes once the broadcast's first pushes are out.
            try await Database.withClient { client in
                let deliveryLog = PostgresDeliveryLogStore(client: client, logger: testLogger)
                _ = try await Database.waitFor("the broadcast's pushes logged", timeout: .seconds(60)) {
                    try await deliveryLog.deliveries(appId: broadcaster.appId, notificationId: nil, since: nil, limit: 1, pageToken: nil).deliveries.count
                } until: { $0 > 0 }
            }
            let quietId = try await quiet.publishAccepted(.alert(to: quietUser))
            let quietPush = try #require(
                try await Sandbox.waitForDeliveries(to: quietToken, timeout: .seconds(120)) { !$0.isEmpty }.first, "the other app's notification was not pushed")
            #expect(quietPush.notificationId == quietId)
            // Behind the broadcast it would be pushed after every member of it; in its own lane, before the middle one.
            let middlePush = try #require(
                try await Sandbox.waitForDeliveries(to: middle, timeout: .seconds(180)) { !$0.isEmpty }.first, "the broadcast's middle member got nothing")
            let quietAt = try #require(quietPush.receivedAt.flatMap(Self.instant))
            let middleAt = try #require(middlePush.receivedAt.flatMap(Self.instant))
            #expect(quietAt < middleAt, "the other app's push (\(quietPush.receivedAt ?? "")) came after the broadcast's middle member's (\(middlePush.receivedAt ?? ""))")
        }

        private static func instant(_ text: String) -> Date? {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            return formatter.date(from: text) ?? ISO8601DateFormatter().date(from: text)
        }
    }
}
