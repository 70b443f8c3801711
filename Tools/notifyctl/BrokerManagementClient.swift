import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NotifyBrokerAdmin
import NotifyModels

/// RabbitMQ's management HTTP API as the dlq commands use it, in one virtual host: list queues, fetch messages
/// (leaving them queued, or taking them), publish through the default exchange with publisher confirms, purge.
/// The calls go through NotifyBrokerAdmin's client, which storage manages users and policies with.
struct BrokerManagementClient: Sendable {
    /// A queue as listed: the management API's object, of which notifyctl reads the name and message count.
    struct Queue: Sendable {
        var object: [String: JSONValue]

        var name: String {
            if case .string(let name)? = object["name"] { name } else { "" }
        }

        /// Ready and unacknowledged messages, as the broker last sampled them (every few seconds); nil before the
        /// first sample.
        var messages: Int? {
            if case .number(let count)? = object["messages"] { Int(count) } else { nil }
        }
    }

    /// A message as fetched (`POST /api/queues/{vhost}/{name}/get`, base64 payload).
    struct Message: Decodable, Sendable {
        var payload: String
        /// `content_type`, `message_id`, `headers`, ... as the management API names them; empty when the message has none.
        var properties: [String: JSONValue]

        private enum CodingKeys: String, CodingKey {
            case payload, properties
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            payload = try container.decode(String.self, forKey: .payload)
            // A message without properties has them as an empty list.
            if case .object(let properties) = try container.decode(JSONValue.self, forKey: .properties) {
                self.properties = properties
            } else {
                properties = [:]
            }
        }

        var body: Data { Data(base64Encoded: payload) ?? Data() }
        var contentType: String? { Self.text(properties["content_type"]) }
        var messageId: String? { Self.text(properties["message_id"]) }

        /// An application header's value as text (a number as its digits); nil when absent or a table or list.
        func header(_ name: String) -> String? {
            guard case .object(let headers)? = properties["headers"] else { return nil }
            return Self.text(headers[name])
        }

        /// Whether `other` is the same message: the same body and properties, but for the delivery count the broker
        /// adds as it hands a message out again.
        func isSameMessage(as other: Message) -> Bool {
            payload == other.payload && withoutDeliveryCount(properties) == withoutDeliveryCount(other.properties)
        }

        private func withoutDeliveryCount(_ properties: [String: JSONValue]) -> [String: JSONValue] {
            guard case .object(var headers)? = properties["headers"] else { return properties }
            headers["x-delivery-count"] = nil
            var stripped = properties
            stripped["headers"] = .object(headers)
            return stripped
        }

        private static func text(_ value: JSONValue?) -> String? {
            switch value {
            case .string(let text)?: text
            case .number(let number)? where number.rounded() == number: String(Int64(number))
            case .number(let number)?: String(number)
            case .bool(let flag)?: String(flag)
            default: nil
            }
        }
    }

    private let management: RabbitMQManagementClient
    let virtualHost: String

    /// How long one call may take.
    static let callTimeout: TimeAmount = .seconds(30)

    /// `url` carries the credentials (`http://user:password@host:port`), as NOTIFY_RABBITMQ_MANAGEMENT_URL does.
    init(url: String, virtualHost: String) throws {
        guard let configuration = RabbitMQManagementClient.Configuration(url: url, virtualHost: virtualHost, timeout: Self.callTimeout) else {
            throw UsageError("--management-url must be http(s)://user:password@host:port, got \(url)")
        }
        management = RabbitMQManagementClient(configuration: configuration)
        self.virtualHost = virtualHost
    }

    /// Every queue of the virtual host.
    func queues() async throws -> [Queue] {
        let answer = try await call(.GET, "/api/queues/\(escaped(virtualHost))?columns=name,messages", doing: "list the queues")
        guard let objects = try? JSONDecoder().decode([[String: JSONValue]].self, from: answer) else {
            throw unreadable(answer, doing: "list the queues")
        }
        return objects.map(Queue.init)
    }

    /// The first `count` messages of `queue`, left in it, in order (each fetched, then rejected with requeue).
    func peek(_ queue: String, count: Int) async throws -> (messages: [Message], answer: Data) {
        try await fetch(queue, count: count, ackMode: "reject_requeue_true")
    }

    /// Takes the first `count` messages out of `queue` (each fetched and acknowledged).
    func take(_ queue: String, count: Int) async throws -> [Message] {
        try await fetch(queue, count: count, ackMode: "ack_requeue_false").messages
    }

    /// Publishes `message` (body, properties and headers) to `queue` through the default exchange, once the broker
    /// confirmed it; a message that reached no queue (no such queue) is a refusal.
    func publish(_ message: Message, toQueue queue: String) async throws {
        struct Request: Encodable {
            var properties: [String: JSONValue]
            var routingKey: String
            var payload: String
            var payloadEncoding = "base64"

            enum CodingKeys: String, CodingKey {
                case properties, routingKey = "routing_key", payload, payloadEncoding = "payload_encoding"
            }
        }
        struct Routed: Decodable {
            var routed: Bool
        }
        let doing = "publish to \(queue)"
        let answer = try await call(
            .POST, "/api/exchanges/\(escaped(virtualHost))/amq.default/publish", doing: doing,
            body: try JSONEncoder().encode(Request(properties: message.properties, routingKey: queue, payload: message.payload)))
        guard let routed = try? JSONDecoder().decode(Routed.self, from: answer) else { throw unreadable(answer, doing: doing) }
        guard routed.routed else { throw CommandFailure.refused("no queue \(queue) in virtual host \(virtualHost) took the message") }
    }

    /// Deletes every message of `queue`.
    func purge(_ queue: String) async throws {
        _ = try await call(.DELETE, "/api/queues/\(escaped(virtualHost))/\(escaped(queue))/contents", doing: "purge \(queue)")
    }

    private func fetch(_ queue: String, count: Int, ackMode: String) async throws -> (messages: [Message], answer: Data) {
        struct Request: Encodable {
            var count: Int
            var ackmode: String
            var encoding = "base64"
        }
        let doing = "fetch messages of \(queue)"
        let answer = try await call(
            .POST, "/api/queues/\(escaped(virtualHost))/\(escaped(queue))/get", doing: doing,
            body: try JSONEncoder().encode(Request(count: count, ackmode: ackMode)))
        guard let messages = try? JSONDecoder().decode([Message].self, from: answer) else { throw unreadable(answer, doing: doing) }
        return (messages, answer)
    }

    /// One call; a 2xx answer's body, else a refusal (4xx) or unavailability (no answer, 5xx) naming what was being done.
    private func call(_ method: HTTPMethod, _ path: String, doing operation: String, body: Data? = nil) async throws -> Data {
        do {
            return try await management.request(method, path, body: body, doing: operation, answerLimit: ServiceClient.maximumAnswer)
        } catch {
            switch error.code {
            case .unauthorized: throw CommandFailure.refused(error.description)
            case .refused(let status) where (400..<500).contains(status): throw CommandFailure.refused(error.description)
            case .unreachable, .refused: throw CommandFailure.unavailable(error.description)
            }
        }
    }

    private func unreadable(_ body: Data, doing operation: String) -> CommandFailure {
        .unavailable("RabbitMQ's management API answered what notifyctl cannot read (\(operation)): \(String(decoding: body.prefix(300), as: UTF8.self))")
    }

    private func escaped(_ text: String) -> String {
        RabbitMQManagementClient.segment(text)
    }
}
