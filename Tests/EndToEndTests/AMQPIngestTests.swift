import Foundation
import NotifyAMQP
import NotifyModels
import Testing

extension EndToEndTests {
    @Suite("publishing over AMQP")
    struct AMQPIngestTests {
        /// An app server that publishes to `notify.ingest` as its own broker user and reads replies from a queue of its own.
        private struct AppServer: Sendable {
            var app: TestApp
            var brokerUser: String
            var configuration: AMQPConfiguration
            var replyQueue: String

            var topology: AMQPTopology {
                AMQPTopology(queues: [.init(name: replyQueue, deadLetterQueue: nil, deliveryLimit: nil)])
            }

            /// Publishes `notification` with routing key `routingKey` (an app id), a message id, its user id and a reply address.
            func publish(_ notification: NotificationRequest, routingKey: String, correlationId: String, with publisher: AMQPPublisher) async throws {
                try await publisher.publish(AMQPOutboundMessage(
                    exchange: QueueNames.ingestExchange, routingKey: routingKey, body: StackClient.encode(notification),
                    properties: AMQPProperties(
                        messageId: UUID().uuidString, correlationId: correlationId, replyTo: replyQueue, userId: brokerUser)))
            }
        }

        /// Creates a RabbitMQ user allowed to publish to `notify.ingest` and to own queues named `e2e.reply.*`, and an app
        /// with that broker user; runs `body` with a connected publisher and reply consumer; then removes user and queue.
        private func withAppServer(_ body: (AppServer, AMQPPublisher, Broker.Inbox) async throws -> Void) async throws {
            let brokerUser = "e2e-app-\(uniqueSuffix())"
            let password = randomHex(bytes: 16)
            let replyQueue = "e2e.reply.\(uniqueSuffix())"
            try await Broker.ctl(["add_user", brokerUser, password])
            let outcome: Result<Void, any Error>
            do {
                try await Broker.ctl(["set_permissions", "-p", Broker.virtualHost, brokerUser, #"^e2e\.reply\."#, #"^notify\.ingest$"#, #"^e2e\.reply\."#])
                let server = AppServer(
                    app: try await TestApp.create(brokerUser: brokerUser), brokerUser: brokerUser,
                    configuration: try Broker.configuration(user: brokerUser, password: password), replyQueue: replyQueue)
                try await Broker.withPublisher(server.configuration, topology: server.topology) { publisher in
                    try await Broker.withConsumer(server.configuration, queue: replyQueue, topology: server.topology) { inbox in
                        try await body(server, publisher, inbox)
                    }
                }
                outcome = .success(())
            } catch {
                outcome = .failure(error)
            }
            try? await Broker.ctl(["delete_queue", "-p", Broker.virtualHost, replyQueue])
            try? await Broker.ctl(["delete_user", brokerUser])
            try outcome.get()
        }

        private struct Accepted: Decodable {
            var id: String
        }

        @Test("a notification published to notify.ingest is answered 202 with its id on the reply queue and reaches both devices")
        func publishWithReply() async throws {
            try await withAppServer { server, publisher, inbox in
                let user = "user-\(uniqueSuffix())"
                let phone = try await server.app.registerDevice(of: user)
                let tablet = try await server.app.registerDevice(of: user)
                let correlationId = UUID().uuidString

                try await server.publish(.alert(to: user, title: "over AMQP"), routingKey: server.app.appId, correlationId: correlationId, with: publisher)

                let reply = try await inbox.reply(correlatedWith: correlationId)
                #expect(reply.properties.headers["x-notify-status"] == "202", "reply: \(String(decoding: reply.body, as: UTF8.self))")
                let id = try WireCoding.makeDecoder().decode(Accepted.self, from: reply.body).id.lowercased()
                for device in [phone, tablet] {
                    let missing = try await Sandbox.missingNotifications([id], at: device)
                    #expect(missing.isEmpty, "device \(device) did not receive the AMQP-published notification within 20 s")
                }
                let push = try await Sandbox.deliveries(to: phone).first
                #expect(push?.payload["aps"]?["alert"]?["title"]?.stringValue == "over AMQP")
            }
        }

        @Test("a message for another app's routing key is answered 403 and not delivered")
        func publishForAnotherApp() async throws {
            try await withAppServer { server, publisher, inbox in
                let otherApp = try await TestApp.create()
                let user = "user-\(uniqueSuffix())"
                let device = try await otherApp.registerDevice(of: user)
                let correlationId = UUID().uuidString

                try await server.publish(.alert(to: user, title: "not yours"), routingKey: otherApp.appId, correlationId: correlationId, with: publisher)

                let reply = try await inbox.reply(correlatedWith: correlationId)
                let answer = HTTPAnswer(status: Int(reply.properties.headers["x-notify-status"] ?? "") ?? 0, body: reply.body)
                expectAPIError(answer, status: 403, field: "user_id", "publishing for another app")
                try await Task.sleep(for: .seconds(2))
                #expect(try await Sandbox.deliveries(to: device).isEmpty, "the other app's user received a notification its app did not publish")
            }
        }
    }
}
