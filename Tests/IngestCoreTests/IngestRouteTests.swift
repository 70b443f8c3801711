import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NotifyAMQP
import NotifyModels
import NotifyStore
import NotifyWire
import Testing

@testable import IngestCore

/// Authentication, validation and error bodies of ingest's routes, in-process.
@Suite struct IngestRouteTests {
    private static let publishPath = "/v1/apps/\(RouteTesting.appId)/notifications"

    private static func bearer(_ token: String) -> HTTPFields { [.authorization: "Bearer \(token)"] }

    @Test("the operator's routes refuse a missing or wrong token with 401 naming Authorization")
    func operatorTokenIsChecked() async throws {
        try await RouteTesting().run { client in
            for headers in [HTTPFields(), Self.bearer("wrong"), [.authorization: "Basic \(RouteTesting.adminToken)"]] {
                let response = try await client.execute(uri: "/v1/apps", method: .post, headers: headers, body: ByteBuffer(string: #"{"name":"x"}"#))
                #expect(response.status == .unauthorized)
                let body = try ErrorBody(response)
                #expect(body.error.code == "unauthorized")
                #expect(body.error.field == "Authorization")
            }
        }
    }

    @Test("a publish is refused for a missing key (401), an unknown app (404 naming appId) and a wrong key (401)")
    func appServerKeyIsChecked() async throws {
        try await RouteTesting().run { client in
            let body = ByteBuffer(string: #"{"userId":"alice","payload":{"rawContent":"x"}}"#)
            let missing = try await client.execute(uri: Self.publishPath, method: .post, body: body)
            #expect(missing.status == .unauthorized)
            let unknown = try await client.execute(uri: "/v1/apps/no_such_app/notifications", method: .post, headers: Self.bearer("api-key"), body: body)
            #expect(unknown.status == .notFound)
            #expect(try ErrorBody(unknown).error.field == "appId")
            let wrong = try await client.execute(uri: Self.publishPath, method: .post, headers: Self.bearer("not-the-key"), body: body)
            #expect(wrong.status == .unauthorized)
        }
    }

    @Test("an accepted publish answers 202 with a lowercase id once the command was published, in the wire format")
    func publishIsAccepted() async throws {
        let testing = RouteTesting()
        try await testing.run { client in
            let response = try await client.execute(
                uri: Self.publishPath, method: .post, headers: Self.bearer("api-key"),
                body: ByteBuffer(string: #"{"userId":"alice","payload":{"visualContent":{"title":"Hi","body":"There"}}}"#))
            #expect(response.status == .accepted)
            let answer = try JSONDecoder().decode([String: String].self, from: Data(response.body.readableBytesView))
            let id = try #require(answer["id"])
            #expect(id == id.lowercased())

            let message = try #require(testing.published.all.first)
            #expect(testing.published.all.count == 1)
            #expect(message.routingKey == QueueNames.storageCommands)
            #expect(message.properties.contentType == WireFormat.contentType)
            let commands = try StorageCommandBatch(body: message.body, contentType: message.properties.contentType).commands
            guard case .publishNotification(let notification) = commands.first?.action else {
                Issue.record("not a publish: \(commands)")
                return
            }
            #expect(notification.userId == "alice")
            #expect(notification.notificationId.lowercasedString == id)
            #expect(notification.content.payload.visualContent?.title == "Hi")
        }
    }

    @Test("a publish body that is wrong is refused with 400 naming the field, and nothing is published", arguments: [
        (#"{"userId":"alice"}"#, "payload"),
        (#"{"payload":{"rawContent":"x"}}"#, "userId"),
        (#"{"userId":"alice","priority":"urgent","payload":{"rawContent":"x"}}"#, "priority"),
        (#"{"userId":"alice","displayTimeToLive":"long","payload":{"rawContent":"x"}}"#, "displayTimeToLive"),
    ])
    func invalidPublishIsRefused(body: String, field: String) async throws {
        let testing = RouteTesting()
        try await testing.run { client in
            let response = try await client.execute(uri: Self.publishPath, method: .post, headers: Self.bearer("api-key"), body: ByteBuffer(string: body))
            #expect(response.status == .badRequest)
            #expect(try ErrorBody(response).error.field == field)
        }
        #expect(testing.published.all.isEmpty)
    }

    @Test("a body that is not JSON is a 400, one over 1 MiB a 413")
    func malformedAndOversizedBodies() async throws {
        try await RouteTesting().run { client in
            let garbage = try await client.execute(uri: Self.publishPath, method: .post, headers: Self.bearer("api-key"), body: ByteBuffer(string: "{not json"))
            #expect(garbage.status == .badRequest)
            let large = ByteBuffer(repeating: UInt8(ascii: " "), count: (1 << 20) + 1)
            let tooLarge = try await client.execute(uri: Self.publishPath, method: .post, headers: Self.bearer("api-key"), body: large)
            #expect(tooLarge.status == .contentTooLarge)
            #expect(try ErrorBody(tooLarge).error.code == "body_too_large")
        }
    }

    @Test("a batch answers per item: the valid one accepted, the invalid one refused naming its path")
    func batchAnswersPerItem() async throws {
        let testing = RouteTesting()
        try await testing.run { client in
            let response = try await client.execute(
                uri: Self.publishPath, method: .post, headers: Self.bearer("api-key"),
                body: ByteBuffer(string: #"{"notifications":[{"userId":"a","payload":{"rawContent":"x"}},{"userId":"b"}]}"#))
            #expect(response.status == .accepted)
            let text = String(buffer: response.body)
            #expect(text.contains(#""status":202"#) && text.contains(#""field":"notifications[1].payload""#), "\(text)")
        }
        #expect(testing.published.all.count == 1)
    }

    @Test("userId with eventSource: a member's devices in the source are pushed; a user who is not a member is a 404 not_subscribed naming eventSource, with nothing stored (alone or in a batch)")
    func publishToANonMemberIsRefused() async throws {
        let testing = RouteTesting()
        try await testing.run { client in
            let member = try await client.execute(
                uri: Self.publishPath, method: .post, headers: Self.bearer("api-key"),
                body: ByteBuffer(string: #"{"userId":"alice","eventSource":"news","payload":{"rawContent":"x"}}"#))
            #expect(member.status == .accepted)
            guard case .publishNotification(let published) = testing.published.commands.last?.action else {
                Issue.record("no notification was sent to storage")
                return
            }
            #expect(published.pushSubscriptionIds == [FixedTargets.subscriptionId])

            let stranger = try await client.execute(
                uri: Self.publishPath, method: .post, headers: Self.bearer("api-key"),
                body: ByteBuffer(string: #"{"userId":"bob","eventSource":"news","payload":{"visualContent":{"title":"Hi"}}}"#))
            #expect(stranger.status == .notFound)
            let refusal = try ErrorBody(stranger).error
            #expect((refusal.code, refusal.field) == ("not_subscribed", "eventSource"))
            let batch = try await client.execute(
                uri: Self.publishPath, method: .post, headers: Self.bearer("api-key"),
                body: ByteBuffer(string: #"{"notifications":[{"userId":"alice","payload":{"rawContent":"x"}},{"userId":"bob","eventSource":"news","payload":{"rawContent":"x"}}]}"#))
            #expect(batch.status == .accepted)
            let text = String(buffer: batch.body)
            #expect(text.contains(#""status":404,"error":{"code":"not_subscribed""#) && text.contains(#""field":"notifications[1].eventSource""#), "\(text)")

            let feed = try await client.execute(uri: "/v1/me/notifications", method: .get, headers: try await RouteTesting.bearerUser("bob"))
            #expect(feed.status == .ok)
            #expect(try RouteTesting.decode(HistoryPage.self, feed).notifications.isEmpty, "bob's feed holds nothing")
        }
        let users = testing.published.commands.compactMap { command -> String? in
            guard case .publishNotification(let published) = command.action else { return nil }
            return published.userId
        }
        #expect(users == ["alice", "alice"], "only alice's notifications went to storage")
    }

    @Test("recipients: a copy per user with its push options over the notification's, answered per recipient; wrong ones named by their path")
    func recipientsArePublishedEach() async throws {
        let testing = RouteTesting()
        try await testing.run { client in
            let body = #"""
                {"payload":{"visualContent":{"title":"Sale"}},"push":{"sound":"chime.caf","category":"SALE","data":{"a":"1","b":"2"}},
                 "recipients":[{"userId":"ana","push":{"sound":"bell.caf","data":{"b":"3"}}},{"userId":"ben","push":{"delivery":"silent"}},
                               {"userId":"cy","push":{"delivery":"none"}},{"push":{"badge":2}},{"userId":"dee","push":{"badge":-1}}]}
                """#
            let response = try await client.execute(uri: Self.publishPath, method: .post, headers: Self.bearer("api-key"), body: ByteBuffer(string: body))
            #expect(response.status == .accepted)
            let text = String(buffer: response.body)
            #expect(text.contains(#""field":"recipients[3].userId""#) && text.contains(#""field":"recipients[4].push.badge""#), "\(text)")
            let message = try #require(testing.published.all.first)
            let published = try StorageCommandBatch(body: message.body, contentType: message.properties.contentType).commands.compactMap { command in
                if case .publishNotification(let notification) = command.action { notification } else { nil }
            }
            #expect(published.map(\.userId) == ["ana", "ben", "cy"])
            #expect(Set(published.map(\.notificationId)).count == 3, "each recipient has its own copy")
            let ana = published[0].content.push
            #expect(ana?.sound == "bell.caf" && ana?.category == "SALE" && ana?.data == ["a": .string("1"), "b": .string("3")])
            #expect(published[1].content.push?.delivery == .silent && published[1].content.push?.sound == "chime.caf")
            #expect(published[2].content.delivery == .none)

            for (body, field) in [
                (#"{"userId":"a","payload":{"rawContent":"x"},"recipients":[{"userId":"b"}]}"#, "recipients"),
                (#"{"payload":{"rawContent":"x"},"recipients":[]}"#, "recipients"),
                (#"{"payload":{"rawContent":"x"},"recipients":[{"userId":"b"},{"userId":"c"},{"userId":"b"}]}"#, "recipients[2].userId"),
                (#"{"notifications":[{"payload":{"rawContent":"x"},"recipients":[{"userId":"b"}]}]}"#, "notifications[0].recipients"),
            ] {
                let refused = try await client.execute(uri: Self.publishPath, method: .post, headers: Self.bearer("api-key"), body: ByteBuffer(string: body))
                #expect(refused.status == .badRequest, "\(body)")
                let answer = String(buffer: refused.body)
                #expect(answer.contains(#""field":"\#(field)""#), "\(body): \(answer)")
            }
        }
    }

    @Test("recipients with eventSource alone: one broadcast, each member's push options over the notification's; wrong ones named by their path")
    func broadcastRecipientsAreOneBroadcast() async throws {
        let testing = RouteTesting()
        try await testing.run { client in
            let body = #"""
                {"eventSource":"news","payload":{"visualContent":{"title":"Sale"}},"push":{"sound":"chime.caf","data":{"a":"1"}},
                 "recipients":[{"userId":"ana","push":{"sound":"bell.caf","data":{"b":"2"}}},{"userId":"cy","push":{"delivery":"none"}}]}
                """#
            let response = try await client.execute(uri: Self.publishPath, method: .post, headers: Self.bearer("api-key"), body: ByteBuffer(string: body))
            #expect(response.status == .accepted, "\(String(buffer: response.body))")
            #expect(String(buffer: response.body).hasPrefix(#"{"id":"#), "one broadcast, answered as one notification")
            let message = try #require(testing.published.all.first)
            let broadcasts = try StorageCommandBatch(body: message.body, contentType: message.properties.contentType).commands.compactMap { command in
                if case .publishBroadcast(let broadcast) = command.action { broadcast } else { nil }
            }
            let broadcast = try #require(broadcasts.first)
            #expect(broadcasts.count == 1 && broadcast.content.push?.sound == "chime.caf")
            let ana = broadcast.recipientPush?["ana"]
            #expect(ana?.sound == "bell.caf" && ana?.data == ["a": .string("1"), "b": .string("2")])
            #expect(broadcast.recipientPush?["cy"]?.delivery == PushDelivery.none && broadcast.recipientPush?["cy"]?.sound == "chime.caf")

            for (body, field) in [
                (#"{"eventSource":"news","payload":{"rawContent":"x"},"recipients":[{"userId":"a"},{"userId":"a"}]}"#, "recipients[1].userId"),
                (#"{"eventSource":"news","payload":{"rawContent":"x"},"recipients":[{"push":{"sound":"a"}}]}"#, "recipients[0].userId"),
                (#"{"eventSource":"news","payload":{"rawContent":"x"},"recipients":[{"userId":"a","push":{"badge":-1}}]}"#, "recipients[0].push.badge"),
                (#"{"eventSource":"news","userId":"a","payload":{"rawContent":"x"},"recipients":[{"userId":"b"}]}"#, "recipients"),
            ] {
                let refused = try await client.execute(uri: Self.publishPath, method: .post, headers: Self.bearer("api-key"), body: ByteBuffer(string: body))
                #expect(refused.status == .badRequest, "\(body)")
                let answer = String(buffer: refused.body)
                #expect(answer.contains(#""field":"\#(field)""#), "\(body): \(answer)")
            }
        }
    }

    @Test("pushRecipientsOnly with recipients: each recipient's copy keeps its own text; one without a push is stored unpushed")
    func recipientsOnlyPushesThoseWithTheirOwn() async throws {
        let testing = RouteTesting()
        try await testing.run { client in
            let body = #"""
                {"payload":{"visualContent":{"title":"New message"}},"push":{"sound":"chime.caf"},"pushRecipientsOnly":true,
                 "recipients":[{"userId":"user1","push":{"title":"hey user1","body":"alert"}},{"userId":"user2","push":{"body":"for you"}},
                               {"userId":"user3"}]}
                """#
            let response = try await client.execute(uri: Self.publishPath, method: .post, headers: Self.bearer("api-key"), body: ByteBuffer(string: body))
            #expect(response.status == .accepted, "\(String(buffer: response.body))")
            let message = try #require(testing.published.all.first)
            let published = try StorageCommandBatch(body: message.body, contentType: message.properties.contentType).commands.compactMap { command in
                if case .publishNotification(let notification) = command.action { notification } else { nil }
            }
            #expect(published.map(\.userId) == ["user1", "user2", "user3"])
            #expect(published[0].content.alertText == VisualContent(title: "hey user1", body: "alert") && published[0].content.isAlert)
            #expect(published[1].content.alertText == VisualContent(title: "New message", body: "for you"))
            #expect(published.allSatisfy { $0.content.payload.visualContent == VisualContent(title: "New message") }, "the stored text is the notification's")
            #expect(published[2].content.delivery == .none && published[2].content.push?.sound == "chime.caf")

            // A recipient's text too large for APNs is refused at its place in the list, naming the text.
            let tooLong = String(repeating: "x", count: 4100)
            let oversized = #"{"payload":{"rawContent":"x"},"recipients":[{"userId":"a"},{"userId":"b","push":{"body":"\#(tooLong)"}}]}"#
            let refused = try await client.execute(uri: Self.publishPath, method: .post, headers: Self.bearer("api-key"), body: ByteBuffer(string: oversized))
            let answer = String(buffer: refused.body)
            #expect(answer.contains(#""status":413"#) && answer.contains(#""field":"recipients[1].push.body""#), "\(answer)")
            let alone = try await client.execute(
                uri: Self.publishPath, method: .post, headers: Self.bearer("api-key"),
                body: ByteBuffer(string: #"{"userId":"a","payload":{"rawContent":"x"},"pushRecipientsOnly":true}"#))
            #expect(alone.status == .badRequest && String(buffer: alone.body).contains(#""field":"pushRecipientsOnly""#))
        }
    }

    @Test("a device's routes refuse a missing, malformed, expired or foreign user token with 401")
    func userTokenIsChecked() async throws {
        try await RouteTesting().run { client in
            let foreign = try await UserToken.mint(userId: "alice", appId: RouteTesting.appId, signingKey: "b3RoZXIta2V5LW9mLWFub3RoZXItYXBw")
            let expired = try await RouteTesting.userToken("alice", lifetime: -600)
            for headers in [HTTPFields(), Self.bearer("not.a.jwt"), Self.bearer(expired), Self.bearer(foreign)] {
                let response = try await client.execute(uri: "/v1/me/notifications/changes", method: .get, headers: headers)
                #expect(response.status == .unauthorized, "\(headers)")
                #expect(try ErrorBody(response).error.field == "Authorization")
            }
        }
    }

    @Test("a device registration that is wrong is refused with 400 naming the field")
    func invalidRegistrationIsRefused() async throws {
        try await RouteTesting().run { client in
            let response = try await client.execute(
                uri: "/v1/me/subscriptions", method: .post, headers: Self.bearer(try await RouteTesting.userToken("alice")),
                body: ByteBuffer(string: #"{"platform":"apns","pushToken":"not-hex"}"#))
            #expect(response.status == .badRequest)
            #expect(try ErrorBody(response).error.field == "pushToken")
        }
    }

    @Test func healthAnswersItsChecks() async throws {
        try await RouteTesting().run { client in
            let response = try await client.execute(uri: "/health", method: .get)
            #expect(response.status == .ok)
            #expect(String(buffer: response.body).contains(#""amqp":true"#))
        }
    }
}
