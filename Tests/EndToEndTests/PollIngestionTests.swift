import Foundation
import NotifyModels
import Testing

extension EndToEndTests {
    @Suite("polling a back end for notifications")
    struct PollIngestionTests {
        /// A feed the provider sandbox serves at `url`: what the service polls.
        private struct Feed {
            let name = "feed-\(uniqueSuffix())"
            var url: String { "\(Stack.sandboxURL)/feeds/\(name)" }

            struct Log: Decodable {
                var requests: Int
                var failed: Int
                var lastAuthorization: String?
            }

            /// Serves `notifications` as `{"notifications": [...]}` from now on; the next `failing` requests are answered 503.
            func serve(_ notifications: [NotificationRequest], failing: Int = 0) async throws {
                struct Document: Encodable { var notifications: [NotificationRequest] }
                let answer = try await StackClient.send(.PUT, "\(url)?fail=\(failing)", json: StackClient.encode(Document(notifications: notifications)))
                guard answer.status == 204 else { throw TestFailure("PUT \(url) answered \(answer.status)") }
            }

            func log() async throws -> Log {
                try await StackClient.send(.GET, "\(url)/log").decode(Log.self)
            }

            /// Waits until the service asked `count` more times than `after`.
            func awaitRequests(after: Int, count: Int = 1, timeout: Duration = .seconds(30)) async throws -> Log {
                let deadline = ContinuousClock.now + timeout
                while true {
                    let log = try await log()
                    if log.requests >= after + count { return log }
                    guard ContinuousClock.now < deadline else { throw TestFailure("the feed was asked \(log.requests - after) times within \(timeout)") }
                    try await Task.sleep(for: .milliseconds(200))
                }
            }
        }

        private static func item(_ id: String, to user: String, title: String) -> NotificationRequest {
            NotificationRequest(userId: user, appNotificationId: id, payload: NotificationPayload(visualContent: VisualContent(title: title)))
        }

        @Test("the service polls a registered back end, publishes each item once however often it polls (a restart included), backs off while it fails, and publishes a changed item as an update",
              .timeLimit(.minutes(3)))
        func pollsPublishesOnceAndBacksOff() async throws {
            let app = try await TestApp.create()
            let user = "user-\(uniqueSuffix())"
            let phone = try await app.registerDevice(of: user)
            let feed = Feed()
            try await feed.serve([Self.item("a", to: user, title: "First"), Self.item("b", to: user, title: "Second")])

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
            // Counted by push id: a push repeated on the wire (the same apns-id, as at-least-once delivery allows) is not a
            // second publish.
            #expect(Set(try await Sandbox.deliveries(to: phone).map { $0.headers["apns-id"] }).count == 2, "an item polled again is not published again")

            // The back end fails twice, then serves a changed item and a new one: both arrive once it answers.
            try await feed.serve([Self.item("a", to: user, title: "First, changed"), Self.item("b", to: user, title: "Second"),
                                  Self.item("c", to: user, title: "Third")], failing: 2)
            let third = DeterministicID.notificationID(appId: app.appId, userId: user, appNotificationId: "c").lowercasedString
            #expect(try await Sandbox.missingNotifications([third], at: phone, timeout: .seconds(40)).isEmpty, "the new item arrived after the failures")
            #expect(try await feed.log().failed == 2)
            try await Task.sleep(for: .seconds(2))
            let pushes = Dictionary(try await Sandbox.deliveries(to: phone).map { ($0.headers["apns-id"], $0) }) { first, _ in first }.values
            #expect(pushes.count == 4, "a, b, then a's update and c: \(pushes.map { $0.payload["aps"]?["alert"]?["title"]?.stringValue ?? "-" })")
            #expect(pushes.contains { $0.payload["aps"]?["alert"]?["title"]?.stringValue == "First, changed" })

            // Deleted, it is polled no more.
            #expect(try await StackClient.send(.DELETE, "\(Stack.ingestURL)/v1/apps/\(app.appId)/poll-sources/legacy", bearer: app.apiKey).status == 204)
            try await Task.sleep(for: .seconds(6))
            let settled = try await feed.log().requests
            try await Task.sleep(for: .seconds(3))
            #expect(try await feed.log().requests == settled, "a deleted source is not polled")
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
