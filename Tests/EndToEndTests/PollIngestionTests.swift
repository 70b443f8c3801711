import Foundation
import NotifyModels
import Testing

extension EndToEndTests {
    @Suite("polling a back end for notifications")
    struct PollIngestionTests {
        @Test("the service polls a registered back end, publishes each item once however often it polls (a restart included), backs off while it fails, and publishes a changed item as an update",
              .timeLimit(.minutes(3)))
        func pollsPublishesOnceAndBacksOff() async throws {
            let app = try await TestApp.create()
            let user = "user-\(uniqueSuffix())"
            let phone = try await app.registerDevice(of: user)
            let feed = PollFeed()
            try await feed.serve([PollFeed.item("a", to: user, title: "First"), PollFeed.item("b", to: user, title: "Second")])

            let registered = try await StackClient.send(
                .PUT, "\(Stack.ingestURL)/v1/apps/\(app.appId)/poll-sources/legacy", bearer: app.apiKey,
                json: StackClient.encode(PollSourceRequest(url: feed.url, intervalSeconds: 1, authorization: "Bearer legacy-secret")))
            #expect(registered.status == 201, "\(registered.text)")
            let view = try registered.decode(PollSourceView.self)
            #expect(view.hasAuthorization && view.intervalSeconds == 1 && view.url == feed.url)
            #expect(!registered.text.contains("legacy-secret"), "the header is never answered back")

            let first = try await feed.awaitRequests(after: 0)
            #expect(first.lastAuthorization == "Bearer legacy-secret")
            let ids = [("a"), ("b")].map { DeterministicID.notificationID(appId: app.appId, userId: user, appNotificationId: $0).lowercasedString }
            #expect(try await Sandbox.missingNotifications(Set(ids), at: phone).isEmpty, "both items were pushed")

            // Polled several times more, across a restart of ingest: nothing is pushed again.
            try await Services.restoringAll { try await Services.control("restart", ["ingest"]) }
            _ = try await feed.awaitRequests(after: try await feed.log().requests, count: 3)
            try await Task.sleep(for: .seconds(1))
            #expect(try await Sandbox.distinctDeliveries(to: phone).count == 2, "an item polled again is not published again")

            // The back end fails twice, then serves a changed item and a new one: both arrive once it answers.
            try await feed.serve([PollFeed.item("a", to: user, title: "First, changed"), PollFeed.item("b", to: user, title: "Second"),
                                  PollFeed.item("c", to: user, title: "Third")], failing: 2)
            let third = DeterministicID.notificationID(appId: app.appId, userId: user, appNotificationId: "c").lowercasedString
            #expect(try await Sandbox.missingNotifications([third], at: phone, timeout: .seconds(40)).isEmpty, "the new item arrived after the failures")
            #expect(try await feed.log().failed == 2)
            try await Task.sleep(for: .seconds(2))
            let pushes = try await Sandbox.distinctDeliveries(to: phone)
            #expect(pushes.count == 4, "a, b, then a's update and c: \(pushes.map { $0.payload["aps"]?["alert"]?["title"]?.stringValue ?? "-" })")
            #expect(pushes.contains { $0.payload["aps"]?["alert"]?["title"]?.stringValue == "First, changed" })

            // Deleted, it is polled no more.
            #expect(try await StackClient.send(.DELETE, "\(Stack.ingestURL)/v1/apps/\(app.appId)/poll-sources/legacy", bearer: app.apiKey).status == 204)
            try await Task.sleep(for: .seconds(6))
            let settled = try await feed.log().requests
            try await Task.sleep(for: .seconds(3))
            #expect(try await feed.log().requests == settled, "a deleted source is not polled")
        }

        @Test("a back end that never answers does not slow another app's source: each source is polled on its own schedule",
              .timeLimit(.minutes(2)))
        func hangingBackEndHoldsOnlyItself() async throws {
            let (stuckApp, quietApp) = (try await TestApp.create(), try await TestApp.create())
            let (stuckFeed, quietFeed) = (PollFeed(), PollFeed())
            // Each request to it hangs 30 s: every poll of it times out after 10 s.
            try await stuckFeed.serve([PollFeed.item("stuck", to: "someone", title: "Never read")], delaySeconds: 30)
            try await quietFeed.serve([PollFeed.item("quiet", to: "someone", title: "Read every second")])
            for (app, feed) in [(stuckApp, stuckFeed), (quietApp, quietFeed)] {
                try await feed.register(as: "feed", of: app, intervalSeconds: 1)
            }
            _ = try await stuckFeed.awaitRequests(after: 0)
            let before = try await quietFeed.log().requests
            try await Task.sleep(for: .seconds(8))
            let polled = try await quietFeed.log().requests - before
            // Every second on its own; waiting for the hanging one, it would be polled once or not at all in 8 s.
            #expect(polled >= 4, "the other app's source was polled \(polled) times in 8 s")
            for app in [stuckApp, quietApp] {
                _ = try await StackClient.send(.DELETE, "\(Stack.ingestURL)/v1/apps/\(app.appId)/poll-sources/feed", bearer: app.apiKey)
            }
        }

        @Test("a poll source is refused with the field named: a URL that is not http(s), an interval out of range")
        func badSourcesAreRefused() async throws {
            let app = try await TestApp.create()
            let path = "\(Stack.ingestURL)/v1/apps/\(app.appId)/poll-sources/x"
            expectAPIError(
                try await StackClient.send(.PUT, path, bearer: app.apiKey, json: StackClient.encode(PollSourceRequest(url: "ftp://example.com/feed"))),
                status: 400, field: "url", "an ftp URL")
            expectAPIError(
                try await StackClient.send(
                    .PUT, path, bearer: app.apiKey, json: StackClient.encode(PollSourceRequest(url: "https://example.com/feed", intervalSeconds: 0))),
                status: 400, field: "intervalSeconds", "a zero interval")
        }
    }
}
