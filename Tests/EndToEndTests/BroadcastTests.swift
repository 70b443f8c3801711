import Foundation
import NotifyModels
import NotifyStore
import NotifyStoreTesting
import Testing

extension EndToEndTests {
    @Suite("a broadcast to an event source")
    struct BroadcastTests {
        @Test(
            "every member with an active subscription gets it, across pages of the audience, as one push; an expired member gets nothing and ends nothing",
            .timeLimit(.minutes(3)))
        func reachesEveryActiveMember() async throws {
            let app = try await TestApp.create()
            let source = "news-\(uniqueSuffix())"
            let defined = try await StackClient.send(
                .POST, "\(Stack.ingestURL)/v1/apps/\(app.appId)/event-sources", bearer: app.apiKey,
                json: StackClient.encode(EventSourceRequest(name: source, policy: .open)))
            #expect(defined.status == 201, "\(defined.text)")
            var registered: [String] = []
            for reader in 0..<2 {
                let token = randomHex(bytes: 32)
                let answer = try await app.registerDevice(
                    SubscriptionRequest(platform: .apns, pushToken: token, displayName: "e2e reader", eventSources: [source]),
                    token: try await app.userToken("reader-\(reader)"))
                #expect(answer.status == 201 || answer.status == 202, "\(answer.text)")
                registered.append(token)
            }
            // 5,999 more members straight into PostgreSQL, so that the audience spans two pages of 5,000. The member
            // that ends the first page has an expired subscription: the page is still full and the second one follows.
            let seeded = 5999
            let members = seeded + registered.count
            let (expired, firstOfSecondPage, last) = try await Database.withClient { client in
                try await EventSourceAudience.seed(seeded, userPrefix: "seeded-", of: source, in: app, on: client)
                // Registrations answered 202 are applied shortly: the offsets below count every member.
                let devices = PostgresDeviceStore(client: client, logger: testLogger)
                _ = try await Database.waitFor("the source's member count") {
                    try await devices.eventSources(appId: app.appId, named: source).first?.memberDevices ?? 0
                } until: { $0 == members }
                let audience = try await EventSourceAudience.members(of: source, in: app, on: client)
                try #require(audience.count == members, "the audience as a broadcast pages through it")
                try await DatabaseFixtures(client: client, logger: testLogger).expireSubscription(audience[4999].subscriptionId)
                return (audience[4999].pushToken, audience[5000].pushToken, audience[members - 1].pushToken)
            }

            let notificationId = try await app.publishAccepted(
                NotificationRequest(eventSource: source, payload: NotificationPayload(visualContent: VisualContent(title: "Broadcast", body: "to every reader"))))

            // The delivery log counts every push the provider accepted: all members but the expired one.
            let accepted = try await Database.inspecting { inspection in
                try await Database.waitFor("the accepted pushes logged", timeout: .seconds(120)) {
                    try await inspection.outcomeCount(appId: app.appId, notificationId: UUID(uuidString: notificationId)!, result: .accepted)
                } until: { $0 >= members - 1 }
            }
            #expect(accepted == members - 1, "one accepted push per active member, no more")
            // The summary counts them in the database, each push once by its latest result.
            struct Summary: Decodable {
                var pushes: Int
                var byProvider: [String: [String: Int]]
                var byResult: [String: Int]
            }
            let summary = try await app.appServer(.GET, "/notifications/\(notificationId)/deliveries/summary").decode(Summary.self)
            #expect(summary.byProvider["apns"]?["accepted"] == members - 1 && summary.byResult["accepted"] == members - 1, "\(summary)")
            #expect(summary.pushes >= members - 1)
            // At least once, as every hop is: a push whose answer came too late is sent again, with the same apns-id and
            // collapse id, so the device shows it once (DESIGN.md, delivery guarantees).
            for token in registered + [firstOfSecondPage, last] {
                let deliveries = try await Sandbox.waitForDeliveries(to: token) { !$0.isEmpty }
                #expect(!deliveries.isEmpty, "member \(token) got nothing")
                #expect(deliveries.allSatisfy { $0.notificationId == notificationId }, "member \(token) got \(deliveries.map(\.notificationId))")
                #expect(Set(deliveries.compactMap { $0.headers["apns-id"] }).count == 1, "member \(token) got different pushes")
                #expect(deliveries.allSatisfy { $0.headers["apns-collapse-id"] == notificationId })
            }
            #expect(try await Sandbox.deliveries(to: expired).isEmpty, "the member whose subscription expired got a push")
        }
    }
}
