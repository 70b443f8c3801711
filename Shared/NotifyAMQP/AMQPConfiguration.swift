import Foundation

/// Where and how to connect to RabbitMQ.
public struct AMQPConfiguration: Sendable {
    /// One broker node's address.
    public struct Endpoint: Sendable, Hashable, CustomStringConvertible {
        public var host: String
        public var port: Int

        public init(host: String, port: Int = 5672) {
            self.host = host
            self.port = port
        }

        public var description: String { "\(host):\(port)" }
    }

    /// The nodes of one broker (a cluster's nodes, or a single node). A connection goes to one of them and,
    /// when it fails or is lost, to the next; every node is tried before a reconnect pause.
    public var endpoints: [Endpoint]
    public var virtualHost: String
    public var user: String
    public var password: String
    /// Heartbeat interval the client asks for; 0 turns heartbeats off.
    public var heartbeatSeconds: Int
    /// How long opening the TCP connection may take.
    public var connectTimeout: Duration
    /// First and largest pause between reconnect attempts (the pause doubles, with jitter).
    public var reconnectDelay: ClosedRange<Duration>

    public init(
        endpoints: [Endpoint] = [Endpoint(host: "127.0.0.1")], virtualHost: String = "/", user: String = "guest", password: String = "guest",
        heartbeatSeconds: Int = 30, connectTimeout: Duration = .seconds(5), reconnectDelay: ClosedRange<Duration> = .milliseconds(100)...Duration.seconds(5)
    ) {
        self.endpoints = endpoints
        self.virtualHost = virtualHost
        self.user = user
        self.password = password
        self.heartbeatSeconds = heartbeatSeconds
        self.connectTimeout = connectTimeout
        self.reconnectDelay = reconnectDelay
    }

    /// Parses `amqp://user:password@host:port/vhost` (the vhost percent-encoded; `/%2f` is `/`; no path is `/`;
    /// a trailing slash alone is the empty vhost, as the AMQP URI spec says), or several such URLs separated by
    /// commas, one per node of a cluster, which must agree on user, password and vhost.
    public init(url: String) throws(AMQPError) {
        var nodes: [(endpoint: Endpoint, user: String, password: String, virtualHost: String)] = []
        for part in url.split(separator: ",", omittingEmptySubsequences: false) {
            nodes.append(try Self.node(String(part).trimmingCharacters(in: .whitespaces)))
        }
        let first = nodes[0]
        guard nodes.allSatisfy({ $0.user == first.user && $0.password == first.password && $0.virtualHost == first.virtualHost }) else {
            throw AMQPError(code: .invalidConfiguration, message: "every URL of a node list must have the same user, password and vhost")
        }
        self.init(endpoints: nodes.map(\.endpoint), virtualHost: first.virtualHost, user: first.user, password: first.password)
    }

    private static func node(_ url: String) throws(AMQPError) -> (endpoint: Endpoint, user: String, password: String, virtualHost: String) {
        guard let components = URLComponents(string: url), components.scheme == "amqp", let host = components.host, !host.isEmpty else {
            throw AMQPError(code: .invalidConfiguration, message: "expected an amqp://user:password@host:port/vhost URL, or several separated by commas")
        }
        let defaults = AMQPConfiguration()
        let user = components.percentEncodedUser.map { $0.removingPercentEncoding ?? $0 } ?? defaults.user
        let password = components.percentEncodedPassword.map { $0.removingPercentEncoding ?? $0 } ?? defaults.password
        let path = components.percentEncodedPath
        let virtualHost = path.isEmpty ? "/" : String(path.dropFirst()).removingPercentEncoding ?? String(path.dropFirst())
        return (Endpoint(host: host, port: components.port ?? 5672), user, password, virtualHost)
    }
}

// Printed in logs (a service holding its configuration is described at debug level): never the password.
extension AMQPConfiguration: CustomStringConvertible {
    public var description: String { "amqp://\(user)@\(endpoints.map(\.description).joined(separator: ","))/\(virtualHost)" }
}
