/// What an app server needs to publish to `notify.ingest` over AMQP: its broker user, answered once when the operator
/// creates the app with `"brokerAccess": true` or rotates its credentials (`POST /v1/apps/{appId}/broker-credentials`).
public struct BrokerCredentials: Codable, Sendable, Equatable {
    public var user: String
    public var password: String
    public var host: String
    public var port: Int
    public var virtualHost: String
    /// `amqp://user:password@host:port/vhost`, percent-encoded.
    public var url: String
    public var exchange: String
    /// The routing key to publish with: the app id.
    public var routingKey: String
    /// Reply queues the user may declare and consume from start with this; direct reply-to needs none.
    public var replyQueuePrefix: String

    public init(
        user: String, password: String, host: String, port: Int, virtualHost: String, url: String, exchange: String, routingKey: String,
        replyQueuePrefix: String
    ) {
        self.user = user
        self.password = password
        self.host = host
        self.port = port
        self.virtualHost = virtualHost
        self.url = url
        self.exchange = exchange
        self.routingKey = routingKey
        self.replyQueuePrefix = replyQueuePrefix
    }
}
