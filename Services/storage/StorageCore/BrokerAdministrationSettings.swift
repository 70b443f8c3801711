import NotifyAMQP
import NotifyBrokerAdmin
import NotifyRuntime

/// What storage needs to administer the broker: RabbitMQ's management API as an administrator (apps' broker users,
/// `BrokerUserProvisioner`; the bounds of `notify.ingest.dead`, `IngestDeadLetterPolicy`), how often retired users are
/// looked for, and those bounds. Storage is the only service that holds the administrator's credentials: it is not
/// exposed to the internet.
public struct BrokerAdministrationSettings: Sendable {
    static let managementURL = EnvironmentVariable(
        "NOTIFY_RABBITMQ_MANAGEMENT_URL",
        "RabbitMQ management API, http://user:password@host:port, as an administrator: creates and deletes apps' broker users and bounds notify.ingest.dead; \"off\" disables both (apps then get no broker users: POST /v1/apps with brokerAccess is answered 503); unset: NOTIFY_AMQP_URL's user, password and host, port 15672")
    static let maintenance = EnvironmentVariable(
        "NOTIFY_BROKER_MAINTENANCE_SECONDS",
        "how often broker users whose rotation overlap ended are looked for and deleted (new users are created, and a deleted app's users deleted, as soon as they are recorded)",
        default: "30")
    static let deadLetterMessages = EnvironmentVariable(
        "NOTIFY_INGEST_DEAD_LETTER_MAX_MESSAGES", "messages notify.ingest.dead keeps at most (then refuses new copies)", default: "10000")
    static let deadLetterBytes = EnvironmentVariable(
        "NOTIFY_INGEST_DEAD_LETTER_MAX_BYTES", "bytes of message bodies notify.ingest.dead keeps at most", default: "104857600")
    static let deadLetterAge = EnvironmentVariable(
        "NOTIFY_INGEST_DEAD_LETTER_MAX_AGE_SECONDS", "how long notify.ingest.dead keeps a message", default: "604800")

    static let variables = [managementURL, maintenance, deadLetterMessages, deadLetterBytes, deadLetterAge]

    /// nil: "off" (apps get no broker users, and notify.ingest.dead is not bounded).
    public var management: RabbitMQManagementClient.Configuration?
    public var maintenanceInterval: Duration = .seconds(30)
    public var deadLetterMaximumMessages = 10_000
    public var deadLetterMaximumBytes = 104_857_600
    public var deadLetterMaximumAge: Duration = .seconds(604_800)

    /// The defaults: the management API on `amqp`'s first node, port 15672, as `amqp`'s user.
    public init(amqp: AMQPConfiguration) {
        management = .init(baseURL: "http://\(amqp.endpoints[0].host):15672", user: amqp.user, password: amqp.password, virtualHost: amqp.virtualHost)
    }

    init(environment: ServiceEnvironment, amqp: AMQPConfiguration) throws(ConfigurationError) {
        self.init(amqp: amqp)
        switch environment.string(Self.managementURL) {
        case "off":
            management = nil
        case nil:
            break
        case let url?:
            guard let configuration = RabbitMQManagementClient.Configuration(url: url, virtualHost: amqp.virtualHost) else {
                throw ConfigurationError("NOTIFY_RABBITMQ_MANAGEMENT_URL: expected http://user:password@host:port or off")
            }
            management = configuration
        }
        maintenanceInterval = .seconds(max(try environment.integer(Self.maintenance), 1))
        deadLetterMaximumMessages = try environment.integer(Self.deadLetterMessages)
        deadLetterMaximumBytes = try environment.integer(Self.deadLetterBytes)
        deadLetterMaximumAge = .seconds(try environment.integer(Self.deadLetterAge))
    }

    /// The bounds `IngestDeadLetterPolicy` sets.
    var deadLetterBounds: DeadLetterBounds {
        DeadLetterBounds(maximumMessages: deadLetterMaximumMessages, maximumBytes: deadLetterMaximumBytes, maximumAge: deadLetterMaximumAge)
    }
}
