import Foundation
import NotifyAMQP
import NotifyModels
import NotifyTestSupport
import Testing

extension EndToEndTests {
    @Suite("publishing over AMQP")
    struct AMQPIngestTests {
        /// An app server that publishes to `notify.ingest` as the broker user its app was created with, and reads
        /// replies from a queue of its own (`<user>.reply.*`, the only queues it may declare).
        private struct AppServer: Sendable {
            var app: TestApp
            var credentials: BrokerCredentials
            var configuration: AMQPConfiguration
            var replyQueue: String

            var topology: AMQPTopology {
                AMQPTopology(queues: [.init(name: replyQueue, deadLetterQueue: nil, deliveryLimit: nil, durable: false)])
            }

            /// Publishes `notification` with routing key `routingKey` (an app id), a message id, its user id and a reply address.
            func publish(
                _ notification: NotificationRequest, routingKey: String, correlationId: String, messageId: String = UUID().uuidString,
                with publisher: AMQPPublisher
            ) async throws {
                try await publisher.publish(AMQPOutboundMessage(
                    exchange: QueueNames.ingestExchange, routingKey: routingKey, body: StackClient.encode(notification),
                    properties: AMQPProperties(
                        messageId: messageId, correlationId: correlationId, replyTo: replyQueue, userId: credentials.user)))
            }
        }

        /// Creates an app with broker access; runs `body` with a publisher and a reply consumer logged in with the
        /// credentials it was given; then deletes the app (and with it the broker user).
        private func withAppServer(_ body: (AppServer, AMQPPublisher, Broker.Inbox) async throws -> Void) async throws {
            let app = try await TestApp.create(brokerAccess: true)
            let outcome: Result<Void, any Error>
            do {
                let credentials = try #require(app.broker, "POST /v1/apps with brokerAccess answered no broker credentials")
                let server = AppServer(
                    app: app, credentials: credentials,
                    configuration: try Broker.configuration(user: credentials.user, password: credentials.password),
                    replyQueue: credentials.replyQueuePrefix + uniqueSuffix())
                try await withPublisher(server.configuration, logger: testLogger, topology: server.topology) { publisher in
                    try await Broker.withConsumer(server.configuration, queue: server.replyQueue, topology: server.topology) { inbox in
                        try await body(server, publisher, inbox)
                    }
                }
                outcome = .success(())
            } catch {
                outcome = .failure(error)
            }
            _ = try? await StackClient.send(.DELETE, "\(Stack.ingestURL)/v1/apps/\(app.appId)", bearer: Stack.adminToken)
            try outcome.get()
        }

        private struct Accepted: Decodable {
            var id: String
        }

        @Test("creating an app with brokerAccess answers least-privilege credentials once: publishing with them is answered 202 on reply_to, as an integer, and reaches both devices")
        func publishWithReply() async throws {
            try await withAppServer { server, publisher, inbox in
                #expect(server.credentials.user.hasPrefix(server.app.appId + "."))
                #expect(server.credentials.exchange == "notify.ingest" && server.credentials.routingKey == server.app.appId)
                let user = "user-\(uniqueSuffix())"
                let phone = try await server.app.registerDevice(of: user)
                let tablet = try await server.app.registerDevice(of: user)
                let correlationId = UUID().uuidString

                try await server.publish(.alert(to: user, title: "over AMQP"), routingKey: server.app.appId, correlationId: correlationId, with: publisher)

                let reply = try await inbox.reply(correlatedWith: correlationId)
                #expect(reply.properties.headers["x-notify-status"] == .integer(202), "reply: \(String(decoding: reply.body, as: UTF8.self))")
                let id = try WireCoding.makeDecoder().decode(Accepted.self, from: reply.body).id
                for device in [phone, tablet] {
                    let missing = try await Sandbox.missingNotifications([id], at: device)
                    #expect(missing.isEmpty, "device \(device) did not receive the AMQP-published notification within 20 s")
                }
                let push = try await Sandbox.deliveries(to: phone).first
                #expect(push?.payload["aps"]?["alert"]?["title"]?.stringValue == "over AMQP")
                #expect(push?.payload["aps"]?["content-available"]?.numberValue == 1, "an alert also wakes the app to sync")
            }
        }

        @Test("an app over its rate limit over AMQP is answered 429 with retry-after and dead-lettered, while another app's messages are answered and delivered")
        func overLimitIsRefusedNotWaited() async throws {
            try await withAppServer { noisy, noisyPublisher, noisyInbox in
                try await withAppServer { quiet, quietPublisher, quietInbox in
                    let limited = try await StackClient.send(
                        .PATCH, "\(Stack.ingestURL)/v1/apps/\(noisy.app.appId)", bearer: Stack.adminToken,
                        json: Data(#"{"rateLimit": {"requestsPerSecond": 1}}"#.utf8))
                    #expect(limited.status == 200, "\(limited.text)")
                    let user = "quiet-\(uniqueSuffix())"
                    let device = try await quiet.app.registerDevice(of: user)
                    let noisyIds = (0..<6).map { _ in UUID().uuidString }
                    for id in noisyIds {
                        try await noisy.publish(.alert(to: "someone"), routingKey: noisy.app.appId, correlationId: id, with: noisyPublisher)
                    }
                    let quietId = UUID().uuidString
                    try await quiet.publish(.alert(to: user, title: "quiet"), routingKey: quiet.app.appId, correlationId: quietId, with: quietPublisher)

                    var statuses: [Int64] = []
                    for id in noisyIds {
                        let reply = try await noisyInbox.reply(correlatedWith: id)
                        let status = reply.properties.headers["x-notify-status"]?.integerValue ?? 0
                        statuses.append(status)
                        if status == 429 {
                            #expect((reply.properties.headers["retry-after"]?.integerValue ?? 0) >= 1, "429 without retry-after")
                            expectAPIError(HTTPAnswer(status: 429, body: reply.body), status: 429, code: "rate_limited", field: nil, "over the limit")
                        }
                    }
                    #expect(statuses.contains(202) && statuses.contains(429), "\(statuses)")
                    let quietReply = try await quietInbox.reply(correlatedWith: quietId)
                    #expect(quietReply.properties.headers["x-notify-status"] == .integer(202))
                    let id = try WireCoding.makeDecoder().decode(Accepted.self, from: quietReply.body).id
                    #expect(try await Sandbox.missingNotifications([id], at: device).isEmpty, "the quiet app's notification was not delivered")
                }
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
                let answer = HTTPAnswer(status: Int(reply.properties.headers["x-notify-status"]?.integerValue ?? 0), body: reply.body)
                expectAPIError(answer, status: 403, field: "user_id", "publishing for another app")
                try await Task.sleep(for: .seconds(2))
                #expect(try await Sandbox.deliveries(to: device).isEmpty, "the other app's user received a notification its app did not publish")
            }
        }

        @Test("a refused message is dead-lettered with its reason and its sender")
        func refusalIsDeadLettered() async throws {
            try await withAppServer { server, publisher, inbox in
                let correlationId = UUID().uuidString
                let marker = "dead-\(uniqueSuffix())"
                let found = try await Broker.deadLetters(of: QueueNames.ingestQueue, whilst: {
                    // No userId and no eventSource: refused as a whole.
                    try await publisher.publish(AMQPOutboundMessage(
                        exchange: QueueNames.ingestExchange, routingKey: server.app.appId,
                        body: Data(#"{"appNotificationId":"\#(marker)","payload":{"visualContent":{"title":"x"}}}"#.utf8),
                        properties: AMQPProperties(
                            messageId: UUID().uuidString, correlationId: correlationId, replyTo: server.replyQueue, userId: server.credentials.user)))
                    _ = try await inbox.reply(correlatedWith: correlationId)
                }) { delivery in
                    String(decoding: delivery.body, as: UTF8.self).contains(marker) ? [delivery] : []
                }
                let letter = try #require(found.first, "the refused message was not dead-lettered")
                #expect(letter.reason?.hasPrefix("400 ") == true, "reason: \(letter.reason ?? "none")")
                #expect(letter.item.properties.headers["x-notify-user-id"] == .string(server.credentials.user), "the sender is kept")
            }
        }

        @Test("with pika: the README's example publishes, the broker refuses what the user may not do, the service answers every refusal with its reason, and a confirmed retry is not pushed again")
        func pikaAgainstTheContract() async throws {
            let python = try #require(
                ProcessInfo.processInfo.environment["NOTIFY_TEST_PYTHON"], "NOTIFY_TEST_PYTHON (a Python with pika) is set by deploy/local/test.sh")
            let app = try await TestApp.create(brokerAccess: true)
            let credentials = try #require(app.broker)
            // The stack's broker as the test reaches it, with the app's credentials.
            let url = try Broker.url(user: credentials.user, password: credentials.password)
            let user = "user-\(uniqueSuffix())"
            let device = try await app.registerDevice(of: user)
            let retryKey = UUID().uuidString
            let environment = ["NOTIFY_AMQP_URL": url, "NOTIFY_APP_ID": app.appId, "NOTIFY_USER_ID": user, "NOTIFY_RETRY_KEY": retryKey]

            // The README's example, as written.
            let example = try await Scripts.runProgram(python, ["\(Stack.root)/Clients/amqp-examples/publish.py"], environment: environment)
            #expect(example.status == 0, "publish.py: \(example.output)")
            let exampleId = try JSONValue.parse(example.output)["body"]?["id"]?.stringValue
            #expect(exampleId != nil, "publish.py printed no id: \(example.output)")

            let run = try await Scripts.runProgram(python, ["\(Stack.root)/Tests/EndToEndTests/Python/ingest_contract.py"], environment: environment)
            #expect(run.status == 0, "ingest_contract.py: \(run.output)")
            let results = try JSONValue.parse(run.output)
            // The broker: 403 ACCESS_REFUSED outside the user's permissions; 406 for a user_id that is not the connection's.
            #expect(results["defaultExchange"]?.intValue == 403)
            #expect(results["otherExchange"]?.intValue == 403)
            #expect(results["foreignQueue"]?.intValue == 403)
            #expect(results["ownReplyQueue"]?.intValue == 0, "the user may declare its own reply queue")
            #expect(results["otherUserId"]?.intValue == 406)
            // The service.
            #expect(results["accepted"]?["status"]?.intValue == 202)
            #expect(results["accepted"]?["statusIsInteger"] == .bool(true), "x-notify-status is an integer header")
            func expectRefusal(_ name: String, _ status: Int, _ code: String, field: String?) {
                let answer = results[name]
                #expect(answer?["status"]?.intValue == status, "\(name): \(answer.map { "\($0)" } ?? "no answer")")
                #expect(answer?["body"]?["error"]?["code"]?.stringValue == code, "\(name)")
                if let field { #expect(answer?["body"]?["error"]?["field"]?.stringValue == field, "\(name)") }
            }
            expectRefusal("noMessageId", 400, "missing_idempotency_key", field: "message_id")
            #expect(results["keyedByAppNotificationId"]?["status"]?.intValue == 202, "an appNotificationId keys a message without message_id")
            expectRefusal("tooLarge", 413, "body_too_large", field: nil)
            expectRefusal("badPriority", 400, "invalid_field", field: "priority")
            let priorityMessage = results["badPriority"]?["body"]?["error"]?["message"]?.stringValue ?? ""
            #expect(priorityMessage.contains("\"high\"") && !priorityMessage.contains("NotificationPriority"), "speaks the API's words: \(priorityMessage)")
            expectRefusal("notJSON", 400, "invalid_json", field: nil)

            let acceptedIds = Set(["accepted", "keyedByAppNotificationId", "retryFirst"].compactMap { results[$0]?["body"]?["id"]?.stringValue } + [exampleId].compactMap { $0 })
            #expect(acceptedIds.count == 4)
            #expect(try await Sandbox.missingNotifications(acceptedIds, at: device).isEmpty, "the accepted notifications reached the device")

            // The retry, after its first publish was pushed (its events confirmed): the same id, and no second push.
            let retryId = try #require(results["retryFirst"]?["body"]?["id"]?.stringValue)
            try await Task.sleep(for: .seconds(1))
            let retry = try await Scripts.runProgram(python, ["\(Stack.root)/Tests/EndToEndTests/Python/ingest_contract.py", "retry"], environment: environment)
            let second = try JSONValue.parse(retry.output)["retrySecond"]
            #expect(second?["status"]?.intValue == 202 && second?["body"]?["id"]?.stringValue == retryId, "retry: \(retry.output)")
            try await Task.sleep(for: .seconds(3))
            let pushes = try await Sandbox.deliveries(to: device)
            #expect(pushes.count == 4, "each accepted notification pushed once, the refused ones never: \(pushes.count) pushes")
            // Every verdict above went through direct reply-to: none is reported undeliverable.
            if let state = ProcessInfo.processInfo.environment["NOTIFY_STATE_DIR"],
                let log = try? String(contentsOfFile: "\(state)/logs/ingest.log", encoding: .utf8)
            {
                let falseAlarms = log.split(separator: "\n").filter { $0.contains("could not deliver a reply") && $0.contains("amq.rabbitmq.reply-to") }
                #expect(falseAlarms.isEmpty, "ingest reported delivered replies as undeliverable: \(falseAlarms.prefix(2))")
            }
            _ = try? await StackClient.send(.DELETE, "\(Stack.ingestURL)/v1/apps/\(app.appId)", bearer: Stack.adminToken)
        }

        @Test("rotating an app's broker credentials: both users work during the overlap, then the old one is deleted; deleting the app deletes its users")
        func rotationAndDeletion() async throws {
            let app = try await TestApp.create(brokerAccess: true)
            let old = try #require(app.broker)
            struct Rotated: Decodable {
                var broker: BrokerCredentials
                var retiring: [Retiring]
                struct Retiring: Decodable { var user: String }
            }
            let answer = try await StackClient.send(
                .POST, "\(Stack.ingestURL)/v1/apps/\(app.appId)/broker-credentials", bearer: Stack.adminToken,
                json: Data(#"{"overlapSeconds": 3}"#.utf8))
            #expect(answer.status == 201, "rotation answered \(answer.status): \(answer.text)")
            let rotated = try answer.decode(Rotated.self)
            #expect(rotated.broker.user != old.user && rotated.retiring.map(\.user) == [old.user])

            #expect(try await Broker.canConnect(user: old.user, password: old.password), "the old user works during the overlap")
            #expect(try await Broker.canConnect(user: rotated.broker.user, password: rotated.broker.password))
            let deadline = ContinuousClock.now + .seconds(30)
            while try await Broker.canConnect(user: old.user, password: old.password), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(500))
            }
            #expect(try await !Broker.canConnect(user: old.user, password: old.password), "the old user is deleted once the overlap ended")

            let deleted = try await StackClient.send(.DELETE, "\(Stack.ingestURL)/v1/apps/\(app.appId)", bearer: Stack.adminToken)
            #expect(deleted.status == 204, "DELETE answered \(deleted.status): \(deleted.text)")
            #expect(try await !Broker.canConnect(user: rotated.broker.user, password: rotated.broker.password), "the app's user goes with it")
            let gone = try await StackClient.send(.POST, "\(Stack.ingestURL)/v1/apps/\(app.appId)/broker-credentials", bearer: Stack.adminToken)
            #expect(gone.status == 404)
        }

        @Test("ingest bounds notify.ingest.dead with a policy on the broker: length, bytes, age, and refusing copies beyond them")
        func deadLetterQueueIsBounded() async throws {
            let deadline = ContinuousClock.now + .seconds(30)
            var listed = ""
            while ContinuousClock.now < deadline {
                listed = try await Scripts.run("rabbitmqctl.sh", ["-q", "list_policies", "-p", Broker.virtualHost]).output
                if listed.contains("notify-ingest-dead") { break }
                try await Task.sleep(for: .milliseconds(500))
            }
            let line = listed.split(separator: "\n").first { $0.contains("notify-ingest-dead") }.map(String.init) ?? ""
            for part in [#"notify\.ingest\.dead"#, #""max-length":10000"#, #""max-length-bytes":104857600"#, #""message-ttl":604800000"#, #""overflow":"reject-publish""#] {
                #expect(line.contains(part), "the policy has \(part): \(line.isEmpty ? listed : line)")
            }
        }

        @Test("brokerUser named by the operator is refused with the way to get one")
        func operatorNamedUserRefused() async throws {
            let answer = try await StackClient.send(
                .POST, "\(Stack.ingestURL)/v1/apps", bearer: Stack.adminToken, json: Data(#"{"name":"x","brokerUser":"someone"}"#.utf8))
            expectAPIError(answer, status: 400, field: "brokerUser", "an operator-named broker user")
        }
    }
}
