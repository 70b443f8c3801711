import Foundation

/// Where and how to connect to RabbitMQ.
public struct AMQPConfiguration: Sendable {
    public var host: String
    public var port: Int
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
        host: String = "127.0.0.1", port: Int = 5672, virtualHost: String = "/", user: String = "guest", password: String = "guest",
        heartbeatSeconds: Int = 30, connectTimeout: Duration = .seconds(5), reconnectDelay: ClosedRange<Duration> = .milliseconds(100)...Duration.seconds(5)
    ) {
        self.host = host
        self.port = port
        self.virtualHost = virtualHost
        self.user = user
        self.password = password
        self.heartbeatSeconds = heartbeatSeconds
        self.connectTimeout = connectTimeout
        self.reconnectDelay = reconnectDelay
    }

    /// Parses `amqp://user:password@host:port/vhost` (the vhost percent-encoded; `/%2f` is `/`;
    /// no path is `/`; a trailing slash alone is the empty vhost, as the AMQP URI spec says).
    public init(url: String) throws(AMQPError) {
        guard let components = URLComponents(string: url), components.scheme == "amqp", let host = components.host, !host.isEmpty else {
            throw AMQPError(code: .invalidConfiguration, message: "expected an amqp://user:password@host:port/vhost URL")
        }
        self.init()
        self.host = host
        self.port = components.port ?? 5672
        if let user = components.percentEncodedUser { self.user = user.removingPercentEncoding ?? user }
        if let password = components.percentEncodedPassword { self.password = password.removingPercentEncoding ?? password }
        let path = components.percentEncodedPath
        if path.isEmpty {
            virtualHost = "/"
        } else {
            let encoded = String(path.dropFirst())
            virtualHost = encoded.removingPercentEncoding ?? encoded
        }
    }
}
