import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NotifyAMQP
import NotifyModels
import NotifyStore
import NotifyStoreTesting
import NotifyTestSupport
import NotifyWire
import Testing

@testable import IngestCore

/// `GET /v1/me/stream` (Server-Sent Events) in-process: a stream reads its user's changes from the notifications held
/// in memory and is woken by `LiveHub`, fed change batches as the live queue's consumer feeds it. The hub runs as the
/// service it is, so that its shutdown ends the open streams (as the server's does) and the test reads what each sent.
@Suite struct LiveStreamRouteTests {
    /// A stream to open: whose, and the `Last-Event-ID` it resumes after.
    private struct Opening: Sendable {
        var appId = RouteTesting.appId
        var userId: String
        var lastEventID: String?
    }

    /// Route tests whose notification reads are counted, with a hub allowing `maximumStreamsPerUser` streams.
    private static func testing(maximumStreamsPerUser: Int = 10) -> (RouteTesting, CountingNotificationReader) {
        var testing = RouteTesting()
        let reader = CountingNotificationReader(of: testing.notifications)
        testing.notificationReader = reader
        testing.hub = LiveHub(maximumStreamsPerUser: maximumStreamsPerUser)
        return (testing, reader)
    }

    /// Opens the streams, runs `whileOpen` once each has read its changes, then ends them as the server's shutdown does;
    /// answers what each stream sent, in the order of `openings`.
    private static func streams(
        _ openings: [Opening], of testing: RouteTesting, reader: CountingNotificationReader,
        whileOpen: @escaping @Sendable (any TestClientProtocol) async throws -> Void = { _ in }
    ) async throws -> [TestResponse] {
        try await testing.run { client in
            let streams = try await withServices([testing.hub], logger: Logger(label: "live-stream-route-tests")) {
                let streams = openings.map { opening in
                    Task {
                        var headers = try await RouteTesting.bearerUser(opening.userId, of: opening.appId)
                        if let lastEventID = opening.lastEventID { headers[StreamRoutes.lastEventID] = lastEventID }
                        return try await client.execute(uri: "/v1/me/stream", method: .get, headers: headers)
                    }
                }
                for opening in openings { try await reader.waitUntil(opening.userId, of: opening.appId, hasReadChanges: 1) }
                try await whileOpen(client)
                return streams
            }
            var answers: [TestResponse] = []
            for stream in streams { answers.append(try await stream.value) }
            return answers
        }
    }

    /// The changes a stream sent, each with its event id, in order.
    private static func events(_ response: TestResponse) throws -> [(id: String, change: NotificationChange)] {
        let decoder = WireCoding.makeDecoder()
        return try String(buffer: response.body).components(separatedBy: "\n\n").compactMap { block in
            let lines = block.split(separator: "\n")
            guard lines.contains("event: change"), let id = lines.first(where: { $0.hasPrefix("id: ") })?.dropFirst(4),
                  let data = lines.first(where: { $0.hasPrefix("data: ") })?.dropFirst(6)
            else { return nil }
            return (String(id), try decoder.decode(NotificationChange.self, from: Data(data.utf8)))
        }
    }

    private static func titles(_ response: TestResponse) throws -> [String?] {
        try events(response).map { $0.change.notification.payload?.visualContent?.title }
    }

    /// The change batch storage would publish on `notify.changes` for `created`, as the live queue delivers it.
    private static func delivery(_ created: [(appId: String, view: NotificationView)]) -> AMQPDelivery {
        let events = created.map { appId, view in
            ChangeEvent(
                appId: appId, userId: view.userId, sequence: view.sequence, kind: .created, notificationId: view.id, content: nil,
                readState: view.readState, userActionState: view.userActionState, originSubscriptionId: nil, badge: nil, changedAt: Date())
        }
        return AMQPDelivery(
            received: AMQPOutboundMessage(exchange: QueueNames.changesExchange, routingKey: "", wire: ChangeEventBatch(events: events)), tag: 1)
    }

    @Test("a signed-in user's stream opens with the changes the feed holds, then sends each change it is woken for; another user's and another app's user's are not in it",
          .timeLimit(.minutes(1)))
    func streamsItsUsersChanges() async throws {
        let (testing, reader) = Self.testing()
        testing.notifications.publish(RouteTesting.notification(for: "alice", title: "before"), appId: RouteTesting.appId)
        let openings = [Opening(userId: "alice"), Opening(userId: "bob"), Opening(appId: FixedApp.externalBadgeAppId, userId: "alice")]
        let answers = try await Self.streams(openings, of: testing, reader: reader) { _ in
            let created = openings.map { opening in
                (appId: opening.appId, view: testing.notifications.publish(
                    RouteTesting.notification(for: opening.userId, title: "\(opening.appId)/\(opening.userId)"), appId: opening.appId))
            }
            _ = await testing.hub.handle([Self.delivery(created)])
            for opening in openings { try await reader.waitUntil(opening.userId, of: opening.appId, hasReadChanges: 2) }
        }
        let alice = answers[0]
        #expect(alice.status == .ok)
        #expect(alice.headers[.contentType] == "text/event-stream" && alice.headers[.cacheControl] == "no-cache")
        #expect(String(buffer: alice.body).hasPrefix(": connected\n\n"))
        #expect(try Self.titles(alice) == ["before", "\(RouteTesting.appId)/alice"])
        // Each event's id is the cursor after it, to resume from.
        #expect(try Self.events(alice).map { try SyncCursor.decode($0.id).sequence } == [1, 2])
        #expect(try Self.titles(answers[1]) == ["\(RouteTesting.appId)/bob"])
        #expect(try Self.titles(answers[2]) == ["\(FixedApp.externalBadgeAppId)/alice"])
    }

    @Test("a stream resumes after its Last-Event-ID (an event id, or a bare sequence from older streams), neither repeating nor skipping a change",
          .timeLimit(.minutes(1)))
    func resumesAfterLastEventID() async throws {
        let (testing, reader) = Self.testing()
        for user in ["alice", "bob"] {
            for title in ["1", "2", "3"] { testing.notifications.publish(RouteTesting.notification(for: user, title: title), appId: RouteTesting.appId) }
        }
        let answers = try await Self.streams(
            [Opening(userId: "alice", lastEventID: SyncCursor.encode(SyncPosition(sequence: 1))), Opening(userId: "bob", lastEventID: "1")],
            of: testing, reader: reader)
        #expect(try answers.map(Self.titles) == [["2", "3"], ["2", "3"]])
    }

    @Test("a user holds at most NOTIFY_MAX_STREAMS_PER_USER streams on an instance: one more is answered 429 too_many_streams with Retry-After; another user's opens",
          .timeLimit(.minutes(1)))
    func streamsPerUserAreLimited() async throws {
        let (testing, reader) = Self.testing(maximumStreamsPerUser: 1)
        let answers = try await Self.streams([Opening(userId: "alice"), Opening(userId: "bob")], of: testing, reader: reader) { client in
            let refused = try await client.execute(uri: "/v1/me/stream", method: .get, headers: try await RouteTesting.bearerUser("alice"))
            #expect(refused.status == .tooManyRequests)
            #expect(try ErrorBody(refused).error.code == "too_many_streams")
            #expect(refused.headers[.retryAfter] == "5")
        }
        #expect(answers.map(\.status) == [.ok, .ok])
    }

    @Test("a stream is refused without a user token (401 naming Authorization), with a Last-Event-ID or cursor it did not send (400 naming it), and after purged changes (410 cursor_expired)")
    func refusals() async throws {
        let testing = RouteTesting()
        // Alice's changes up to sequence 2 were purged, as the retention purge does.
        testing.notifications.purgeChanges(appId: RouteTesting.appId, userId: "alice", through: 2)
        try await testing.run { client in
            for headers in [HTTPFields(), RouteTesting.apiKeyHeaders] {
                let anonymous = try await client.execute(uri: "/v1/me/stream", method: .get, headers: headers)
                #expect(anonymous.status == .unauthorized)
                #expect(try ErrorBody(anonymous).error.field == "Authorization")
            }
            var alice = try await RouteTesting.bearerUser("alice")
            let forgedCursor = try await client.execute(uri: "/v1/me/stream?cursor=bm90LWEtY3Vyc29y", method: .get, headers: alice)
            #expect(forgedCursor.status == .badRequest)
            #expect(try ErrorBody(forgedCursor).error.field == "cursor")
            alice[StreamRoutes.lastEventID] = "not-an-event"
            let forgedEvent = try await client.execute(uri: "/v1/me/stream", method: .get, headers: alice)
            #expect(forgedEvent.status == .badRequest)
            #expect(try ErrorBody(forgedEvent).error.field == "Last-Event-ID")
            alice[StreamRoutes.lastEventID] = "1"
            let expired = try await client.execute(uri: "/v1/me/stream", method: .get, headers: alice)
            #expect(expired.status == .gone)
            #expect(try ErrorBody(expired).error.code == "cursor_expired")
        }
    }
}
