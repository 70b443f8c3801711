import Foundation
#if canImport(Glibc)
import Glibc
#endif
import NotifyModels
import NotifyStore
import NotifyStoreTesting
import NotifyTestSupport
import PostgresNIO
import Testing

extension EndToEndTests {
    @Suite("one ingest instance polls a source at a time, and only new or changed items are published")
    struct PollLeaseTests {
        /// The second ingest's port (the stack's ingest port + 17, clear of the other tests' and the sandbox's).
        private static let secondIngestPort = (Int(ProcessInfo.processInfo.environment["NOTIFY_INGEST_PORT"] ?? "") ?? 22080) + 17

        /// The process id of the ingest holding the lease of the app's source `name`, from its session's name
        /// (`notify-ingest poll leases, pid N`); nil while no session holds it.
        private static func leaseHolder(of app: TestApp, source name: String, on client: PostgresClient) async throws -> Int32? {
            try await ServerInspection(client: client, logger: testLogger).pollLeaseHolder(appId: app.appId, source: name)?
                .split(separator: " ").last.flatMap { Int32($0) }
        }

        /// Waits until a session holds the lease of the app's source `name` and answers its holder's process id.
        private static func awaitLeaseHolder(
            of app: TestApp, source name: String, on client: PostgresClient, otherThan previous: Int32? = nil
        ) async throws -> Int32 {
            let deadline = ContinuousClock.now + .seconds(30)
            while true {
                if let holder = try await leaseHolder(of: app, source: name, on: client), holder != previous { return holder }
                guard ContinuousClock.now < deadline else { throw TestFailure("no other instance took the lease of \(name) within 30 s") }
                try await Task.sleep(for: .milliseconds(200))
            }
        }

        @Test("two ingest instances poll a source once per interval between them; a served item is pushed once, and not again when its command's record is gone; a changed item is pushed once, as an update",
              .timeLimit(.minutes(3)))
        func twoInstancesPollOnceAndPushOnce() async throws {
            let app = try await TestApp.create()
            let user = "user-\(uniqueSuffix())"
            let phone = try await app.registerDevice(of: user)
            let feed = PollFeed()
            try await feed.serve([PollFeed.item("a", to: user, title: "First")])
            let notificationId = DeterministicID.notificationID(appId: app.appId, userId: user, appNotificationId: "a")
            try await SecondIngest.running(port: Self.secondIngestPort, environment: [:]) { second in
                // The storage commands both instances made of polled items.
                func commandsOfPolls() async throws -> Double {
                    try await Metrics.value("notify_poll_notifications_total", service: .ingest)
                        + Metrics.value("notify_poll_notifications_total", service: .otherIngest(second.baseURL))
                }
                // Each instance looks at the leases at every reload (5 s): both count themselves by then.
                try await Task.sleep(for: .seconds(6))
                try await feed.register(as: "feed", of: app, intervalSeconds: 2)
                _ = try await feed.awaitRequests(after: 0)
                #expect(try await Sandbox.missingNotifications([notificationId.lowercasedString], at: phone).isEmpty, "the item was pushed")
                // A poll that read the ledger before storage recorded the item sent it again (applied once): the count is
                // taken after a poll that began once the item was pushed.
                _ = try await feed.awaitRequests(after: try await feed.log().requests)
                try await Task.sleep(for: .milliseconds(500))
                let commandsAfterFirstPoll = try await commandsOfPolls()

                // One poll per interval between the two instances (each polling it would make about ten in 10 s).
                let before = try await feed.log().requests
                try await Task.sleep(for: .seconds(10))
                let polled = try await feed.log().requests - before
                #expect(polled >= 3 && polled <= 7, "the source was polled \(polled) times in 10 s at a 2 s interval")
                #expect(try await Sandbox.distinctDeliveries(to: phone).count == 1, "an item polled again is not pushed again")
                #expect(try await commandsOfPolls() == commandsAfterFirstPoll, "an item served unchanged makes no storage command")

                // The item's idempotency record purged, as after its retention: still served, it is not pushed again.
                try await Database.withClient { client in
                    let digest = try await PostgresAppStore(client: client, logger: testLogger).pollLedger(appId: app.appId, source: "feed")[notificationId]
                    #expect(digest != nil, "storage recorded the item in the source's ledger")
                    let commandId = DeterministicID.make("command", app.appId, "poll:feed:a:\(digest ?? "")", "0")
                    let forgotten = try await DatabaseFixtures(client: client, logger: testLogger).forgetAppliedCommand(commandId)
                    #expect(forgotten, "the item's command was recorded under the id its source, appNotificationId and digest make")
                }
                _ = try await feed.awaitRequests(after: try await feed.log().requests, count: 3)
                try await Task.sleep(for: .seconds(1))
                #expect(try await Sandbox.distinctDeliveries(to: phone).count == 1, "an item served past its record's retention is not pushed again")
                #expect(try await commandsOfPolls() == commandsAfterFirstPoll, "nor sent to storage again")

                // Changed, it is pushed once more, as an update, however often it is polled after.
                try await feed.serve([PollFeed.item("a", to: user, title: "First, changed")])
                let deadline = ContinuousClock.now + .seconds(20)
                while try await Sandbox.distinctDeliveries(to: phone).count < 2 {
                    guard ContinuousClock.now < deadline else { throw TestFailure("the changed item was not pushed within 20 s") }
                    try await Task.sleep(for: .milliseconds(200))
                }
                _ = try await feed.awaitRequests(after: try await feed.log().requests, count: 3)
                try await Task.sleep(for: .seconds(1))
                let pushes = try await Sandbox.distinctDeliveries(to: phone)
                #expect(pushes.count == 2, "the change is pushed once: \(pushes.map { $0.payload["aps"]?["alert"]?["title"]?.stringValue ?? "-" })")
                #expect(pushes.contains { $0.payload["aps"]?["alert"]?["title"]?.stringValue == "First, changed" })
                #expect(try await StackClient.send(.DELETE, "\(Stack.ingestURL)/v1/apps/\(app.appId)/poll-sources/feed", bearer: app.apiKey).status == 204)
            }
            try await Database.withClient { client in
                let apps = PostgresAppStore(client: client, logger: testLogger)
                _ = try await Database.waitFor("the source's ledger") { try await apps.pollLedger(appId: app.appId, source: "feed") } until: { $0.isEmpty }
            }
        }

        @Test("when the instance holding a source's lease dies, another takes the lease over and polls the source",
              .timeLimit(.minutes(3)))
        func anotherInstanceTakesOverFromADeadHolder() async throws {
            let app = try await TestApp.create()
            let feed = PollFeed()
            try await feed.serve([PollFeed.item("a", to: "someone", title: "Polled")])
            try await Services.restoringAll {
                try await SecondIngest.running(port: Self.secondIngestPort, environment: [:]) { second in
                    try await Task.sleep(for: .seconds(6))
                    try await feed.register(as: "feed", of: app, intervalSeconds: 1)
                    _ = try await feed.awaitRequests(after: 0)
                    try await Database.withClient { client in
                        let holder = try await Self.awaitLeaseHolder(of: app, source: "feed", on: client)
                        // Killed (SIGKILL): its session ends with its connection, and the lease with it.
                        if holder == second.processIdentifier {
                            kill(holder, SIGKILL)
                        } else {
                            try await Services.control("kill", ["ingest"])
                        }
                        let successor = try await Self.awaitLeaseHolder(of: app, source: "feed", on: client, otherThan: holder)
                        #expect(successor != holder)
                        let before = try await feed.log().requests
                        _ = try await feed.awaitRequests(after: before, count: 3, timeout: .seconds(15))
                    }
                }
            }
            #expect(try await StackClient.send(.DELETE, "\(Stack.ingestURL)/v1/apps/\(app.appId)/poll-sources/feed", bearer: app.apiKey).status == 204)
        }
    }
}
