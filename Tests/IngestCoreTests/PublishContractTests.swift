import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NotifyModels
import NotifyStore
import NotifyTestSupport
import NotifyWire
import Testing

@testable import IngestCore
@testable import NotifyAMQP

/// One table of limits and errors, checked against both ways of publishing: `POST /v1/apps/{appId}/notifications`
/// and a message on `notify.ingest` (through `AMQPIngestHandler`, in-process). Each case says what both answer; where
/// the transports differ by design (the key's name, a key being required), the case says so.
@Suite struct PublishContractTests {
    struct Expected: Equatable, CustomStringConvertible {
        var status: Int
        /// The error code (nil: accepted, or a batch's results).
        var code: String?
        var field: String?

        static let accepted = Expected(status: 202, code: nil, field: nil)
        var description: String { "\(status) \(code ?? "-") \(field ?? "-")" }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var body: [UInt8]
        /// `Idempotency-Key` over HTTP, `message_id` over AMQP.
        var key: String?
        var http: Expected
        var amqp: Expected
        var testDescription: String { name }

        init(_ name: String, _ body: String, key: String? = "key-1", both: Expected) {
            self.init(name, Array(body.utf8), key: key, http: both, amqp: both)
        }

        init(_ name: String, _ body: [UInt8], key: String? = "key-1", http: Expected, amqp: Expected) {
            (self.name, self.body, self.key, self.http, self.amqp) = (name, body, key, http, amqp)
        }
    }

    private static let alert = #"{"userId":"alice","payload":{"visualContent":{"title":"Hi"}}}"#

    static let cases: [Case] = [
        Case("one notification", alert, both: .accepted),
        Case("a batch", #"{"notifications":[\#(alert),\#(alert)]}"#, both: .accepted),
        Case("not JSON", "{nope", both: .init(status: 400, code: "invalid_json", field: nil)),
        Case("a priority that does not exist", #"{"userId":"alice","priority":"urgent","payload":{"rawContent":"x"}}"#,
             both: .init(status: 400, code: "invalid_field", field: "priority")),
        Case("no target", #"{"payload":{"rawContent":"x"}}"#, both: .init(status: 400, code: "missing_field", field: "userId")),
        Case("no payload", #"{"userId":"alice"}"#, both: .init(status: 400, code: "missing_field", field: "payload")),
        Case("an empty batch", #"{"notifications":[]}"#, both: .init(status: 400, code: "invalid_field", field: "notifications")),
        Case("a batch over 500", #"{"notifications":[\#(Array(repeating: alert, count: 501).joined(separator: ","))]}"#,
             both: .init(status: 413, code: "batch_too_large", field: "notifications")),
        Case("a body over 1 MiB", Array(#"{"userId":"alice","payload":{"rawContent":""#.utf8) + Array(repeating: UInt8(ascii: "x"), count: 1 << 20)
             + Array(#""}}"#.utf8), http: .init(status: 413, code: "body_too_large", field: nil), amqp: .init(status: 413, code: "body_too_large", field: nil)),
        Case("an APNs payload over 4 KiB", #"{"userId":"alice","payload":{"rawContent":"\#(String(repeating: "x", count: 5000))"}}"#,
             both: .init(status: 413, code: "payload_too_large", field: "payload.rawContent")),
        Case("a key over 255 bytes", Array(alert.utf8), key: String(repeating: "k", count: 256),
             http: .init(status: 400, code: "invalid_field", field: "Idempotency-Key"), amqp: .init(status: 400, code: "invalid_field", field: "message_id")),
        Case("no key, an appNotificationId", #"{"userId":"alice","appNotificationId":"order-1","payload":{"rawContent":"x"}}"#, key: nil,
             both: .accepted),
        Case("no key, no appNotificationId", Array(alert.utf8), key: nil,
             http: .accepted, amqp: .init(status: 400, code: "missing_idempotency_key", field: "message_id")),
        Case("one device", #"{"subscriptionId":"\#(FixedTargets.subscriptionId)","payload":{"rawContent":"x"}}"#, both: .accepted),
        Case("an unknown device", #"{"subscriptionId":"\#(UUID())","payload":{"rawContent":"x"}}"#,
             both: .init(status: 404, code: "subscription_not_found", field: "subscriptionId")),
        Case("a device and a user", #"{"userId":"alice","subscriptionId":"\#(FixedTargets.subscriptionId)","payload":{"rawContent":"x"}}"#,
             both: .init(status: 400, code: "invalid_field", field: "subscriptionId")),
        Case("a user's devices in a source", #"{"userId":"alice","eventSource":"news","payload":{"rawContent":"x"}}"#, both: .accepted),
        Case("a user who is not a member of the source", #"{"userId":"bob","eventSource":"news","payload":{"rawContent":"x"}}"#,
             both: .init(status: 404, code: "not_subscribed", field: "eventSource")),
        Case("every member of a source", #"{"eventSource":"news","payload":{"rawContent":"x"}}"#, both: .accepted),
        Case("an unknown source", #"{"eventSource":"sport","payload":{"rawContent":"x"}}"#,
             both: .init(status: 404, code: "event_source_not_found", field: "eventSource")),
        Case("a user named twice in recipients", #"{"payload":{"rawContent":"x"},"recipients":[{"userId":"alice"},{"userId":"alice"}]}"#,
             both: .init(status: 400, code: "invalid_field", field: "recipients[1].userId")),
        Case("an unknown source in a batch", #"{"notifications":[\#(alert),{"userId":"alice","eventSource":"sport","payload":{"rawContent":"x"}}]}"#,
             both: .accepted),
    ]

    @Test("over HTTP", arguments: cases)
    func overHTTP(_ contractCase: Case) async throws {
        let answer = try await RouteTesting().run { client in
            var headers: HTTPFields = [.authorization: "Bearer api-key"]
            if let key = contractCase.key { headers[HTTPField.Name("Idempotency-Key")!] = key }
            let response = try await client.execute(
                uri: "/v1/apps/\(RouteTesting.appId)/notifications", method: .post, headers: headers, body: ByteBuffer(bytes: contractCase.body))
            return (Int(response.status.code), Data(response.body.readableBytesView))
        }
        #expect(Self.expected(status: answer.0, body: answer.1) == contractCase.http)
    }

    @Test("over AMQP", arguments: cases)
    func overAMQP(_ contractCase: Case) async throws {
        let (reply, disposition) = try await Self.handle(contractCase.body, messageId: contractCase.key, userId: FixedApp.brokerUser)
        let status = Int(reply.properties.headers["x-notify-status"]?.integerValue ?? 0)
        #expect(Self.expected(status: status, body: reply.body) == contractCase.amqp)
        if contractCase.amqp.status == 202 {
            #expect(disposition == .ack)
        } else {
            guard case .deadLetter(let reason) = disposition else {
                Issue.record("a refused message is dead-lettered, not \(disposition)")
                return
            }
            #expect(reason.hasPrefix("\(contractCase.amqp.status) "), "the reason starts with the status: \(reason)")
        }
    }

    @Test("a publish to one device is stored for its owner and pushed to that device only; to a user's devices in a source, to its members")
    func namedDevicesReachTheCommand() async throws {
        let testing = RouteTesting()
        try await testing.run { client in
            for body in [
                #"{"subscriptionId":"\#(FixedTargets.subscriptionId)","payload":{"rawContent":"x"}}"#,
                #"{"userId":"alice","eventSource":"news","payload":{"rawContent":"x"}}"#,
            ] {
                let response = try await client.execute(
                    uri: "/v1/apps/\(RouteTesting.appId)/notifications", method: .post, headers: [.authorization: "Bearer api-key"],
                    body: ByteBuffer(string: body))
                #expect(response.status == .accepted)
            }
        }
        let published = try testing.published.all.flatMap { try StorageCommandBatch(wireBytes: $0.body).commands }
        let notifications = published.compactMap { command -> PublishedNotification? in
            if case .publishNotification(let notification) = command.action { notification } else { nil }
        }
        #expect(notifications.map(\.userId) == ["alice", "alice"])
        #expect(notifications.map(\.pushSubscriptionIds) == [[FixedTargets.subscriptionId], [FixedTargets.subscriptionId]])
    }

    @Test("over AMQP, only the app's current broker users publish for it: another user, or one whose overlap ended, is refused 403")
    func brokerUserIsChecked() async throws {
        for user in ["someone-else", FixedApp.retiredBrokerUser] {
            let (reply, _) = try await Self.handle(Array(Self.alert.utf8), messageId: "k", userId: user)
            #expect(reply.properties.headers["x-notify-status"] == .integer(403))
            #expect(Self.expected(status: 403, body: reply.body) == .init(status: 403, code: "forbidden", field: "user_id"))
        }
    }

    @Test("a reply to direct reply-to is published without mandatory (it has no queue to route to); one to a named queue with it")
    func directReplyToIsNotMandatory() async throws {
        let direct = try await Self.handle(Array(Self.alert.utf8), messageId: "k", userId: FixedApp.brokerUser, replyTo: "amq.rabbitmq.reply-to.g1h2")
        #expect(!direct.reply.mandatory)
        let named = try await Self.handle(Array(Self.alert.utf8), messageId: "k", userId: FixedApp.brokerUser, replyTo: "app_test.current.reply.1")
        #expect(named.reply.mandatory)
    }

    /// Runs one message through the AMQP ingest handler; answers the reply it sent and what it did with the message.
    private static func handle(
        _ body: [UInt8], messageId: String?, userId: String, replyTo: String = "app_test.current.reply.1"
    ) async throws -> (reply: AMQPOutboundMessage, disposition: AMQPDisposition) {
        let logger = Logger(label: "publish-contract-tests")
        let commands = RecordingPublisher()
        let replies = RecordingPublisher()
        let handler = AMQPIngestHandler(
            apps: AppDirectory(source: FixedApp()),
            contract: PublishContract(intake: NotificationIntake(validator: NotificationValidator()), targets: FixedTargets.directory()),
            sender: CommandSender(publisher: commands, logger: logger), limiter: PublishRateLimiter(defaults: RateLimit()),
            backlog: PipelineBacklog(maximumDepth: 0), replies: replies, logger: logger)
        let delivery = AMQPDelivery(
            tag: AMQPDeliveryTag(connectionGeneration: 1, value: 1), exchange: "notify.ingest", routingKey: RouteTesting.appId, redelivered: false,
            body: Data(body), properties: AMQPProperties(messageId: messageId, correlationId: "c", replyTo: replyTo, userId: userId))
        let dispositions = await handler.handle([delivery])
        let reply = try #require(replies.all.first, "no reply was sent")
        return (reply, dispositions[0])
    }

    /// The status with the error code and field of the body, or none for an acceptance (a single id or a batch's results).
    private static func expected(status: Int, body: Data) -> Expected {
        let error = try? JSONDecoder().decode(ErrorBodyJSON.self, from: body).error
        return Expected(status: status, code: error?.code, field: error?.field)
    }

    private struct ErrorBodyJSON: Decodable {
        struct Detail: Decodable {
            var code: String
            var field: String?
        }
        var error: Detail
    }
}
