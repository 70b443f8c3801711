import Foundation

/// RabbitMQ's message counters and queue depths through its management API (`/api/overview`, `/api/queues`), as the
/// administrator the management URL names. The broker refreshes what the API shows every 5 s
/// (collect_statistics_interval), so a count read right after the work may still miss its last seconds.
struct BrokerStats: Sendable {
    /// The counters at one moment, since the broker started (queues: since each was declared).
    struct Snapshot: Sendable {
        /// Messages clients published.
        let published: Int
        /// Messages delivered to consumers (deliver_get).
        let delivered: Int
        /// Messages routed to each queue, by name.
        let routed: [String: Int]
    }

    private let client: JSONClient
    private let baseURL: String
    private let authorization: String

    /// `managementURL` is `http://user:password@host:port` on a loopback host (`NOTIFY_RABBITMQ_MANAGEMENT_URL`).
    init(managementURL: String, client: JSONClient) throws {
        _ = try LoopbackURL.parse(managementURL, option: "--rabbitmq-management-url")
        guard var components = URLComponents(string: managementURL), let user = components.user, let password = components.password else {
            throw LoadGenError("--rabbitmq-management-url must name the administrator: http://user:password@host:port")
        }
        (components.user, components.password, components.path) = (nil, nil, "")
        guard let base = components.string else { throw LoadGenError("--rabbitmq-management-url: cannot read \(managementURL)") }
        self.client = client
        baseURL = base
        authorization = "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }

    func snapshot() async throws -> Snapshot {
        let overview = try await get("/api/overview", as: Overview.self)
        let queues = try await get("/api/queues?columns=name,messages,message_stats", as: [Queue].self)
        return Snapshot(
            published: overview.messageStats?.publish ?? 0, delivered: overview.messageStats?.deliverGet ?? 0,
            routed: Dictionary(queues.map { ($0.name, $0.messageStats?.publish ?? 0) }, uniquingKeysWith: max))
    }

    /// Messages in all queues now, ready or unacknowledged.
    func queuedMessages() async throws -> Int {
        try await get("/api/overview", as: Overview.self).queueTotals?.messages ?? 0
    }

    private func get<Reply: Decodable>(_ path: String, as type: Reply.Type) async throws -> Reply {
        let url = baseURL + path
        return try JSONClient.decode(Reply.self, try await client.send(.GET, url, authorization: authorization), method: .GET, url: url)
    }

    /// `/api/overview`: only the members read here.
    private struct Overview: Decodable {
        let messageStats: MessageStats?
        let queueTotals: QueueTotals?

        enum CodingKeys: String, CodingKey {
            case messageStats = "message_stats", queueTotals = "queue_totals"
        }
    }

    private struct Queue: Decodable {
        let name: String
        let messageStats: MessageStats?

        enum CodingKeys: String, CodingKey {
            case name, messageStats = "message_stats"
        }
    }

    /// RabbitMQ writes `[]` for an object with nothing counted yet: that reads as zeros.
    private struct MessageStats: Decodable {
        var publish = 0
        var deliverGet = 0

        enum CodingKeys: String, CodingKey {
            case publish, deliverGet = "deliver_get"
        }

        init(from decoder: any Decoder) throws {
            guard let container = try? decoder.container(keyedBy: CodingKeys.self) else { return }
            publish = try container.decodeIfPresent(Int.self, forKey: .publish) ?? 0
            deliverGet = try container.decodeIfPresent(Int.self, forKey: .deliverGet) ?? 0
        }
    }

    private struct QueueTotals: Decodable {
        var messages = 0

        init(from decoder: any Decoder) throws {
            guard let container = try? decoder.container(keyedBy: CodingKeys.self) else { return }
            messages = try container.decodeIfPresent(Int.self, forKey: .messages) ?? 0
        }

        enum CodingKeys: String, CodingKey { case messages }
    }
}
