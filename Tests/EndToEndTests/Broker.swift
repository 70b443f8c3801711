import AsyncHTTPClient
import Foundation
import NIOHTTP1
import NotifyAMQP
import NotifyModels
import NotifyTestSupport
import NotifyWire
import Synchronization

/// RabbitMQ as an app server uses it: its own broker user, a publisher and a reply consumer.
enum Broker {
    /// One call of RabbitMQ's management API (NOTIFY_RABBITMQ_MANAGEMENT_URL, as storage and notifyctl call it),
    /// `path` below its base (`/api/queues/...`): the status and the body.
    static func management(_ method: HTTPMethod, _ path: String) async throws -> (status: Int, body: Data) {
        let managementURL = ProcessInfo.processInfo.environment["NOTIFY_RABBITMQ_MANAGEMENT_URL"] ?? "http://notify:notify@127.0.0.1:21673"
        guard var components = URLComponents(string: managementURL), let user = components.user else {
            throw TestFailure("NOTIFY_RABBITMQ_MANAGEMENT_URL has no credentials: \(managementURL)")
        }
        let authorization = "Basic " + Data("\(user):\(components.password ?? "")".utf8).base64EncodedString()
        (components.user, components.password, components.path) = (nil, nil, "")
        var request = HTTPClientRequest(url: "\(components.string ?? "")\(path)")
        request.method = method
        request.headers.add(name: "Authorization", value: authorization)
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 4 << 20)
        return (Int(response.status.code), Data(body.readableBytesView))
    }

    /// The queues bound to `exchange` (its bindings as source).
    static func queuesBound(to exchange: String) async throws -> [String] {
        struct Binding: Decodable {
            var destination: String
            var destination_type: String
        }
        let (status, body) = try await management(.GET, "/api/exchanges/\(virtualHost)/\(exchange)/bindings/source")
        guard status == 200 else { throw TestFailure("the bindings of \(exchange): \(status) \(String(decoding: body, as: UTF8.self))") }
        return try JSONDecoder().decode([Binding].self, from: body).filter { $0.destination_type == "queue" }.map(\.destination)
    }

    /// The broker's users, each with its tags (`administrator`, `management`, ...).
    static func users() async throws -> [String: [String]] {
        struct User: Decodable {
            var name: String
            var tags: [String]
        }
        let (status, body) = try await management(.GET, "/api/users")
        guard status == 200 else { throw TestFailure("the broker's users: \(status) \(String(decoding: body, as: UTF8.self))") }
        return Dictionary(try JSONDecoder().decode([User].self, from: body).map { ($0.name, $0.tags) }) { first, _ in first }
    }

    /// `NOTIFY_AMQP_URL`, optionally logged in as another user.
    static func configuration(user: String? = nil, password: String? = nil) throws -> AMQPConfiguration {
        var configuration = try AMQPConfiguration(url: Stack.amqpURL)
        if let user, let password {
            configuration.user = user
            configuration.password = password
        }
        configuration.connectTimeout = .seconds(2)
        return configuration
    }

    static var virtualHost: String { (try? AMQPConfiguration(url: Stack.amqpURL).virtualHost) ?? "notify" }

    /// The stack's broker URL logged in as `user`, for a client of another language.
    static func url(user: String, password: String) throws -> String {
        let configuration = try AMQPConfiguration(url: Stack.amqpURL)
        var url = URLComponents()
        (url.scheme, url.user, url.password, url.host, url.port) = ("amqp", user, password, configuration.endpoints[0].host, configuration.endpoints[0].port)
        url.percentEncodedPath = "/" + (configuration.virtualHost.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
        return url.string ?? ""
    }

    /// Whether `user` can open a connection (within 3 s).
    static func canConnect(user: String, password: String) async throws -> Bool {
        let publisher = AMQPPublisher(configuration: try configuration(user: user, password: password), topology: AMQPTopology(), logger: testLogger)
        publisher.startIfNeeded()
        let connected = await publisher.waitUntilConnected(timeout: .seconds(3))
        await publisher.shutdown()
        return connected
    }

    /// `rabbitmqctl.sh ARGS...`; throws with its output if it fails.
    static func ctl(_ arguments: [String]) async throws {
        let result = try await Scripts.run("rabbitmqctl.sh", arguments, timeout: .seconds(60))
        guard result.status == 0 else {
            throw TestFailure("rabbitmqctl \(arguments.joined(separator: " ")) failed (\(result.status)): \(result.output)")
        }
    }

    /// Consumes `queue` into an inbox while `body` runs (acking everything), then shuts the consumer down.
    static func withConsumer<Result: Sendable>(
        _ configuration: AMQPConfiguration, queue: String, topology: AMQPTopology, _ body: (Inbox) async throws -> Result
    ) async throws -> Result {
        let inbox = Inbox()
        let consumer = AMQPConsumer(configuration: configuration, queue: queue, topology: topology, logger: testLogger) { batch in
            inbox.append(batch)
            return batch.map { _ in .ack }
        }
        return try await withServices([consumer], logger: testLogger) {
            let deadline = ContinuousClock.now + .seconds(15)
            while !consumer.isConnected {
                guard ContinuousClock.now < deadline else { throw TestFailure("the consumer of \(queue) did not connect within 15 s") }
                try await Task.sleep(for: .milliseconds(20))
            }
            return try await body(inbox)
        }
    }

    /// The dead letters of a provider's push queue (`push.<provider>.dead`) about `notificationId`, with their
    /// `x-notify-reason`, waiting up to `timeout` for one. Consumes (and so removes) every dead letter it reads.
    static func deadPushJobs(_ provider: String, notificationId: String, timeout: Duration = .seconds(20)) async throws -> [(job: PushJob, reason: String?)] {
        try await deadLetters(of: QueueNames.pushQueue(Platform(rawValue: provider)!), timeout: timeout) { delivery in
            // A letter this build cannot read (one an earlier run left in the test broker) is not this test's.
            ((try? PushJobBatch(delivery).jobs) ?? [])
                .filter { $0.notificationId.uuidString.lowercased() == notificationId }
        }.map { (job: $0.item, reason: $0.reason) }
    }

    /// What `matching` finds in the dead letters of a work queue (`<queue>.dead`), with each letter's
    /// `x-notify-reason`: consumes the dead-letter queue, runs `action`, and waits up to `timeout` for a match.
    /// Consumes (and so removes) every dead letter it reads.
    static func deadLetters<Item: Sendable>(
        of queue: String, timeout: Duration = .seconds(20), whilst action: () async throws -> Void = {},
        matching: @escaping (AMQPDelivery) throws -> [Item]
    ) async throws -> [(item: Item, reason: String?)] {
        try await withConsumer(try configuration(), queue: "\(queue).dead", topology: .workQueue(queue)) { inbox in
            try await action()
            let deadline = ContinuousClock.now + timeout
            while true {
                let found = try inbox.all.flatMap { delivery in
                    try matching(delivery).map { (item: $0, reason: delivery.properties.headers["x-notify-reason"]?.stringValue) }
                }
                if !found.isEmpty || ContinuousClock.now >= deadline { return found }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    /// Messages a test consumer received.
    final class Inbox: Sendable {
        private let deliveries = Mutex<[AMQPDelivery]>([])

        func append(_ batch: [AMQPDelivery]) {
            deliveries.withLock { $0.append(contentsOf: batch) }
        }

        /// Everything received so far.
        var all: [AMQPDelivery] { deliveries.withLock { $0 } }

        /// Polls until a message with this correlation id arrived, for up to `timeout`.
        func reply(correlatedWith correlationId: String, timeout: Duration = .seconds(20)) async throws -> AMQPDelivery {
            let deadline = ContinuousClock.now + timeout
            while true {
                if let reply = deliveries.withLock({ $0.first { $0.properties.correlationId == correlationId } }) { return reply }
                guard ContinuousClock.now < deadline else { throw TestFailure("no reply with correlation id \(correlationId) within \(timeout)") }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }
}
