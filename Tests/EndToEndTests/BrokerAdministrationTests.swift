import Foundation
import NotifyAMQP
import NotifyModels
import NotifyStoreTesting
import NotifyTestSupport
import NotifyWire
import Testing

extension EndToEndTests {
    /// Ingest faces the internet, so it holds no broker administrator's credentials: storage creates apps' broker users
    /// (from the hash of a password only the operator is answered), and ingest binds its live queue over AMQP.
    @Suite("broker administration out of ingest")
    struct BrokerAdministrationTests {
        private static let ingestPort = (Int(ProcessInfo.processInfo.environment["NOTIFY_INGEST_PORT"] ?? "") ?? 22080) + 16

        private struct Rotated: Decodable {
            var broker: BrokerCredentials
            var retiring: [Retiring]
            struct Retiring: Decodable { var user: String }
        }

        private struct Accepted: Decodable {
            var id: String
        }

        /// Publishes one notification over AMQP as `credentials` and answers ingest's verdict (status and body), read
        /// from a reply queue the user may declare.
        private static func publishOverAMQP(_ notification: NotificationRequest, as credentials: BrokerCredentials) async throws -> (status: Int64?, body: Data) {
            let configuration = try Broker.configuration(user: credentials.user, password: credentials.password)
            let replyQueue = credentials.replyQueuePrefix + uniqueSuffix()
            let topology = AMQPTopology(queues: [.init(name: replyQueue, deadLetterQueue: nil, deliveryLimit: nil, durable: false)])
            return try await withPublisher(configuration, logger: testLogger, topology: topology) { publisher in
                try await Broker.withConsumer(configuration, queue: replyQueue, topology: topology) { inbox in
                    let correlationId = UUID().uuidString
                    try await publisher.publish(AMQPOutboundMessage(
                        exchange: credentials.exchange, routingKey: credentials.routingKey, body: StackClient.encode(notification),
                        properties: AMQPProperties(
                            messageId: UUID().uuidString, correlationId: correlationId, replyTo: replyQueue, userId: credentials.user)))
                    let reply = try await inbox.reply(correlatedWith: correlationId)
                    return (reply.properties.headers["x-notify-status"]?.integerValue, reply.body)
                }
            }
        }

        /// The password hashes of the broker users recorded by the storage commands among `traced` (firehose copies).
        private static func passwordHashes(in traced: [AMQPDelivery]) -> [String: String] {
            var hashes: [String: String] = [:]
            // Published to the default exchange, as storage.commands is.
            for delivery in traced where delivery.routingKey == "publish." {
                for command in (try? StorageCommandBatch(wireBytes: delivery.body).commands) ?? [] {
                    if case .putBrokerUser(let record) = command.action, let hash = record.passwordHash { hashes[record.user] = hash }
                }
            }
            return hashes
        }

        /// The live queues bound to the change events' exchange (`fanout.changes` always is).
        private static func liveQueuesBound() async throws -> [String] {
            try await Broker.queuesBound(to: QueueNames.changesExchange).filter { $0 != QueueNames.fanoutChanges }
        }

        /// Polls the live queues bound until `done` holds (up to 60 s); answers the last list.
        private static func waitForLiveBindings(_ done: @escaping ([String]) -> Bool) async throws -> [String] {
            let deadline = ContinuousClock.now + .seconds(60)
            var bound = try await liveQueuesBound()
            while !done(bound) && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(250))
                bound = try await liveQueuesBound()
            }
            return bound
        }

        @Test("an ingest without the management URL, connected as a broker user that is no administrator, creates broker users whose credentials publish over AMQP, rotates them, and serves the live stream, binding its queue again after an idle unbind")
        func ingestWithoutAdministration() async throws {
            try await SecondIngest.running(port: Self.ingestPort, environment: [:]) { ingest in
                // What the process holds: no management URL, and a broker user the management API refuses.
                let environ = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(ingest.processIdentifier)/environ"))
                let variables = environ.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
                #expect(!variables.contains { $0.hasPrefix("NOTIFY_RABBITMQ_MANAGEMENT_URL=") }, "ingest was given the management URL")
                let amqpURL = try #require(variables.first { $0.hasPrefix("NOTIFY_AMQP_URL=") }?.dropFirst("NOTIFY_AMQP_URL=".count))
                let ingestUser = try AMQPConfiguration(url: String(amqpURL)).user
                let users = try await Broker.users()
                #expect(users[ingestUser] == [], "ingest's broker user \(ingestUser) has tags: \(users[ingestUser] ?? ["(no such user)"])")

                // Broker-user creation: the credentials publish over AMQP, and the notification reaches the device.
                let app = try await TestApp.create(brokerAccess: true, ingestURL: ingest.baseURL)
                let first = try #require(app.broker, "POST /v1/apps with brokerAccess answered no broker credentials")
                #expect(try await Broker.users()[first.user] == [], "the app's user has no tags")
                let userId = "user-\(uniqueSuffix())"
                let device = try await app.registerDevice(of: userId)
                let verdict = try await Self.publishOverAMQP(.alert(to: userId, title: "no administrator at the edge"), as: first)
                #expect(verdict.status == 202, "reply: \(String(decoding: verdict.body, as: UTF8.self))")
                let id = try WireCoding.makeDecoder().decode(Accepted.self, from: verdict.body).id
                #expect(try await Sandbox.missingNotifications([id], at: device).isEmpty, "the AMQP-published notification reached the device")

                // Rotation: the new user works at once, the old one is deleted when its overlap ends.
                let answer = try await StackClient.send(
                    .POST, "\(ingest.baseURL)/v1/apps/\(app.appId)/broker-credentials", bearer: Stack.adminToken,
                    json: Data(#"{"overlapSeconds": 0}"#.utf8))
                #expect(answer.status == 201, "rotation answered \(answer.status): \(answer.text)")
                let rotated = try answer.decode(Rotated.self)
                SecretsUsed.record([rotated.broker.password])
                #expect(rotated.broker.user != first.user && rotated.retiring.map(\.user) == [first.user])
                let again = try await Self.publishOverAMQP(.alert(to: userId, title: "rotated"), as: rotated.broker)
                #expect(again.status == 202, "reply: \(String(decoding: again.body, as: UTF8.self))")
                let deadline = ContinuousClock.now + .seconds(30)
                while try await Broker.canConnect(user: first.user, password: first.password), ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(250))
                }
                #expect(try await !Broker.canConnect(user: first.user, password: first.password), "the retired user is deleted")

                // The live stream: with every instance idle no live queue is bound; a stream on this ingest binds its
                // queue, and once the stream closed and the queue was unbound, a new stream binds it again.
                for round in 1...2 {
                    let user = try await app.user("stream-\(round)-\(uniqueSuffix())")
                    let idle = try await Self.waitForLiveBindings { $0.isEmpty }
                    #expect(idle.isEmpty, "round \(round): no stream open, yet bound: \(idle)")
                    let stream = try await LiveStream.open(token: user.token, ingestURL: ingest.baseURL)
                    do {
                        try await stream.waitUntilConnected()
                        #expect(try await Self.liveQueuesBound().count == 1, "round \(round): bound before the stream's first read")
                        let published = try await app.publishAccepted(.alert(to: user.userId, title: "live, round \(round)"))
                        let events = try await stream.waitForEvents(1)
                        #expect(try events.first?.change().notification.id.uuidString.lowercased() == published, "round \(round): the change reached the stream")
                    } catch {
                        await stream.close()
                        throw error
                    }
                    await stream.close()
                }
                let deleted = try await StackClient.send(.DELETE, "\(ingest.baseURL)/v1/apps/\(app.appId)", bearer: Stack.adminToken)
                #expect(deleted.status == 204, "DELETE answered \(deleted.status): \(deleted.text)")
                #expect(try await !Broker.canConnect(user: rotated.broker.user, password: rotated.broker.password), "the app's user goes with it")
            }
        }

        @Test("a broker user's password is answered once and is in no message on the broker and nowhere in the database; storage.commands carries RabbitMQ's salted hash of it")
        func passwordIsNeverSent() async throws {
            let trace = "trace-\(uniqueSuffix())"
            // RabbitMQ's firehose copies every message published in the virtual host to amq.rabbitmq.trace.
            let topology = AMQPTopology(
                queues: [.init(name: trace, deadLetterQueue: nil, deliveryLimit: nil, durable: false)],
                bindings: [.init(queue: trace, exchange: "amq.rabbitmq.trace", routingKey: "publish.#")])
            try await Broker.ctl(["-q", "trace_on", "-p", Broker.virtualHost])
            let outcome: Result<(app: TestApp, rotated: BrokerCredentials, traced: [AMQPDelivery]), any Error>
            do {
                outcome = .success(try await Broker.withConsumer(try Broker.configuration(), queue: trace, topology: topology) { inbox in
                    let app = try await TestApp.create(brokerAccess: true)
                    let answer = try await StackClient.send(
                        .POST, "\(Stack.ingestURL)/v1/apps/\(app.appId)/broker-credentials", bearer: Stack.adminToken)
                    #expect(answer.status == 201, "rotation answered \(answer.status): \(answer.text)")
                    let rotated = try answer.decode(Rotated.self).broker
                    SecretsUsed.record([rotated.password])
                    // Both users were created from commands that went through the broker: wait for their copies.
                    let deadline = ContinuousClock.now + .seconds(20)
                    while Self.passwordHashes(in: inbox.all)[rotated.user] == nil, ContinuousClock.now < deadline {
                        try await Task.sleep(for: .milliseconds(100))
                    }
                    return (app, rotated, inbox.all)
                })
            } catch {
                outcome = .failure(error)
            }
            try await Broker.ctl(["-q", "trace_off", "-p", Broker.virtualHost])
            let (app, rotated, traced) = try outcome.get()
            let first = try #require(app.broker)

            let hashes = Self.passwordHashes(in: traced)
            for (user, password) in [(first.user, first.password), (rotated.user, rotated.password)] {
                #expect(!traced.contains { $0.body.range(of: Data(password.utf8)) != nil }, "\(user)'s password went through the broker")
                let hash = try #require(hashes[user], "no storage command carried \(user)'s record (\(traced.count) messages traced)")
                let salted = try #require(Data(base64Encoded: hash))
                #expect(salted.count == 36 && hash == BrokerPasswordHash.sha256(of: password, salt: Array(salted.prefix(4))), "RabbitMQ's hash of the password")
            }

            // Every row of every table, as text and (for bytes) as hex.
            let found = try await Database.withClient { client in
                let search = PlaintextSearch(client: client, logger: testLogger)
                let tables = try await search.tables()
                var found: [String] = []
                for table in tables {
                    for password in [first.password, rotated.password] {
                        let texts = [password, Data(password.utf8).map { String(format: "%02x", $0) }.joined()]
                        if try await search.rowCount(in: table, containingAnyOf: texts) > 0 { found.append(table) }
                    }
                }
                #expect(tables.contains("app_broker_users"), "the tables were listed: \(tables)")
                return found
            }
            #expect(found.isEmpty, "a broker password is stored in \(found)")
            _ = try? await StackClient.send(.DELETE, "\(Stack.ingestURL)/v1/apps/\(app.appId)", bearer: Stack.adminToken)
        }

        @Test("when storage does not create the broker user in time, creating an app or rotating is answered 503 broker_admin_unavailable and undone: once storage is back, no app, no new broker user, and the app's current user still works")
        func notCreatedInTimeIsUndone() async throws {
            let existing = try await TestApp.create(brokerAccess: true)
            let current = try #require(existing.broker)
            let name = "undone-\(uniqueSuffix())"
            let since = Date()
            let usersBefore = Set(try await Broker.users().keys)
            try await Services.restoringAll {
                try await Services.control("stop", ["storage"])
                let created = try await StackClient.send(
                    .POST, "\(Stack.ingestURL)/v1/apps", bearer: Stack.adminToken,
                    json: Data(#"{"name": "\#(name)", "brokerAccess": true}"#.utf8), deadline: .zero)
                expectAPIError(created, status: 503, code: "broker_admin_unavailable", field: nil, "creating an app while storage is stopped")
                #expect(created.retryAfter != nil, "503 with Retry-After")
                let rotated = try await StackClient.send(
                    .POST, "\(Stack.ingestURL)/v1/apps/\(existing.appId)/broker-credentials", bearer: Stack.adminToken, deadline: .zero)
                expectAPIError(rotated, status: 503, code: "broker_admin_unavailable", field: nil, "rotating while storage is stopped")
                try await Services.control("start", ["storage"])
            }
            // Storage applies what waited, with its undoing: every broker user recorded since is deleted, row and all.
            let left = try await Database.inspecting { inspection in
                try await Database.waitFor("the broker users recorded since", timeout: .seconds(60)) {
                    try await inspection.brokerUserCount(createdSince: since)
                } until: { $0 == 0 }
            }
            #expect(left == 0)
            let apps = try await Database.inspecting { try await $0.appCount(named: name) }
            #expect(apps == 0, "the app whose user was not created in time stays deleted")
            let newUsers = Set(try await Broker.users().keys).subtracting(usersBefore).filter { $0.hasPrefix("app_") }
            #expect(newUsers.isEmpty, "broker users of undone requests: \(newUsers)")
            #expect(try await Broker.canConnect(user: current.user, password: current.password), "the current user was not retired")
            let listed = try await StackClient.send(.GET, "\(Stack.ingestURL)/v1/apps/\(existing.appId)", bearer: Stack.adminToken)
            #expect(try listed.decode(AppView.self).brokerUsers.map(\.user) == [current.user], "\(listed.text)")
            _ = try? await StackClient.send(.DELETE, "\(Stack.ingestURL)/v1/apps/\(existing.appId)", bearer: Stack.adminToken)
        }
    }
}
