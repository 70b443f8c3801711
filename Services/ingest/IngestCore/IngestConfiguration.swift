import Foundation
import NotifyAMQP
import NotifyModels
import NotifyOutbound
import NotifyRuntime

/// What ingest is told at start-up; `variables` are the environment it reads (and `ingest --help` lists). It holds no
/// broker administrator's credentials: storage creates apps' broker users, and the live queue is bound over AMQP.
public struct IngestConfiguration: ServiceConfiguration {
    public var amqp: AMQPConfiguration
    /// The primary, through the read-only role (poll leases are advisory locks taken there).
    public var databaseURL: String
    /// A hot standby (read-only role) for the changes feed and history; nil: they read `databaseURL`.
    public var replicaDatabaseURL: String?
    /// The bearer token of the operator endpoints.
    public var adminToken: String
    public var httpHost = "127.0.0.1"
    public var httpPort = 8080
    /// How long a device subscription lives before it must be renewed.
    public var subscriptionLifetime: TimeInterval = 30 * 86_400
    /// Messages taken from the `notify.ingest` queue at once.
    public var prefetch = 200
    public var logging = LogSettings()
    /// The broker's address as app servers reach it (answered with their credentials).
    public var publicBrokerHost: String
    public var publicBrokerPort: Int
    /// How long a broker user replaced by a rotation stays accepted, unless the request says.
    public var brokerUserOverlap: TimeInterval = 86_400
    /// How long a publish waits for the broker's confirm before the request is answered 503 (see AMQPPublisher).
    public var confirmTimeout: Duration = .milliseconds(5_000)
    /// The publish limits of apps the operator set none for (nil: unlimited).
    public var defaultRateLimit = RateLimit()
    /// Seals the secrets stored for apps (and opens their client signing keys).
    public var secretKeys: SecretKeyring
    /// How long an API key or client signing key replaced by a rotation stays accepted, unless the request says.
    public var keyRotationOverlap: TimeInterval = 86_400
    /// Messages a pipeline queue may hold before publishes are answered 503 (0: no limit).
    public var maximumQueueDepth = 100_000
    /// How long a confirmed publish may wait for storage before ingest paces its intake (`StoragePacing`); zero: no pacing.
    public var storageLag: Duration = .milliseconds(25)
    /// Live streams (`GET /v1/me/stream`) one user may hold open on this instance.
    public var maximumStreamsPerUser = 10
    /// Open HTTP connections this instance serves at once; more wait to be accepted.
    public var maximumConnections = 4_096
    /// How long this instance holds no live stream before its live queue is unbound from `notify.changes` (zero: never).
    public var liveUnbindAfter: Duration = .seconds(30)
    /// What the poller may fetch and which URLs apps and devices may register (webhooks, poll sources, push endpoints).
    public var outboundPolicy = OutboundPolicy()
    /// Whether ingest was given NOTIFY_RABBITMQ_MANAGEMENT_URL, which it does not use (its value is not kept): it warns at
    /// start-up, so that the broker administrator's credentials are taken away from the internet-facing service.
    public var isGivenBrokerAdministration = false

    static let databaseURL = EnvironmentVariable.databaseURL(role: "read-only role, the primary: poll leases are advisory locks taken there")
    static let replicaDatabaseURL = EnvironmentVariable(
        "NOTIFY_REPLICA_DATABASE_URL",
        "PostgreSQL URL (read-only role) of a hot standby, postgres://user:password@host:port/database: the changes feed and history are read there (a read it fails is made on NOTIFY_DATABASE_URL); unset: everything reads NOTIFY_DATABASE_URL")
    static let adminToken = EnvironmentVariable("NOTIFY_ADMIN_TOKEN", "bearer token of the operator endpoints (/v1/apps)", required: true)
    static let httpPort = EnvironmentVariable("NOTIFY_HTTP_PORT", "port of the HTTP API", default: "8080")
    static let subscriptionLifetimeDays = EnvironmentVariable(
        "NOTIFY_SUBSCRIPTION_LIFETIME_DAYS", "days a device subscription lives before it must be renewed", default: "30")
    static let confirmTimeout = EnvironmentVariable(
        "NOTIFY_CONFIRM_TIMEOUT_MS",
        "how long a publish waits for RabbitMQ's confirm before the request is answered 503 with Retry-After (a memory or disk alarm blocks publishers)",
        default: "5000")
    static let appRequestsPerSecond = EnvironmentVariable(
        "NOTIFY_APP_REQUESTS_PER_SECOND",
        "publish requests per second an app may make (to the whole deployment: each ingest instance takes its share) unless the operator set its own (PATCH /v1/apps/{appId}); 0 = unlimited; over it: 429 with Retry-After (over AMQP: the reply's x-notify-status 429 and retry-after, the message dead-lettered)",
        default: "0")
    static let appNotificationsPerSecond = EnvironmentVariable(
        "NOTIFY_APP_NOTIFICATIONS_PER_SECOND", "notifications per second an app may publish, likewise; 0 = unlimited", default: "0")
    static let prefetch = EnvironmentVariable("NOTIFY_PREFETCH", "messages taken from the notify.ingest queue at once", default: "200")
    static let publicBrokerAddress = EnvironmentVariable(
        "NOTIFY_PUBLIC_AMQP_ADDRESS", "host:port app servers connect to, answered with their broker credentials; unset: NOTIFY_AMQP_URL's")
    static let brokerUserOverlap = EnvironmentVariable(
        "NOTIFY_BROKER_USER_OVERLAP_SECONDS", "how long a broker user replaced by a rotation keeps working", default: "86400")
    static let keyRotationOverlap = EnvironmentVariable(
        "NOTIFY_KEY_ROTATION_OVERLAP_SECONDS", "how long an app's API key or client signing key replaced by a rotation keeps working", default: "86400")
    static let maximumQueueDepth = EnvironmentVariable(
        "NOTIFY_MAX_QUEUE_DEPTH",
        "messages storage.commands, fanout.changes or a push queue may hold before publishes are answered 503 pipeline_backlogged with Retry-After (over AMQP the consumer waits); taken again below 80 %; read each second over AMQP (the messages ready in each queue); 0 = no limit",
        default: "100000")
    static let storageLag = EnvironmentVariable(
        "NOTIFY_STORAGE_LAG_MS",
        "while busy, how long a confirmed publish may wait for storage before the next waits (at most 1 s) until storage applied it, so requests wait instead of accepted notifications queueing; 0 = no pacing",
        default: "25")
    static let maximumStreamsPerUser = EnvironmentVariable(
        "NOTIFY_MAX_STREAMS_PER_USER", "live streams one user may hold open on this instance; one more is answered 429 too_many_streams", default: "10")
    static let liveUnbind = EnvironmentVariable(
        "NOTIFY_LIVE_UNBIND_SECONDS",
        "seconds this instance holds no live stream before its live queue is unbound from notify.changes (over AMQP), so that it is not sent every change batch; bound again when a stream opens; 0 = never unbound",
        default: "30")
    static let brokerAdministration = EnvironmentVariable(
        "NOTIFY_RABBITMQ_MANAGEMENT_URL",
        "not ingest's: storage creates apps' broker users, so only storage is given the broker administrator; when set, ingest warns at start-up")
    static let maximumConnections = EnvironmentVariable(
        "NOTIFY_MAX_CONNECTIONS", "open HTTP connections this instance serves at once (keep it under the open-file limit); more wait to be accepted", default: "4096")

    public static let variables: [EnvironmentVariable] = [
        .amqpURL, databaseURL, replicaDatabaseURL, adminToken, .httpHost, httpPort, subscriptionLifetimeDays, prefetch, confirmTimeout, appRequestsPerSecond, appNotificationsPerSecond, .logLevel, .logFormat,
        .secretKeys, .secretKeysFile, keyRotationOverlap, maximumQueueDepth, storageLag, maximumStreamsPerUser, maximumConnections, liveUnbind, .outboundAllow, publicBrokerAddress, brokerUserOverlap,
        brokerAdministration,
    ]

    /// The defaults, with the database, the operators' token and the keys given; app servers reach the broker at
    /// `amqp`'s first node.
    public init(databaseURL: String, adminToken: String, secretKeys: SecretKeyring, amqp: AMQPConfiguration = AMQPConfiguration()) {
        self.amqp = amqp
        self.databaseURL = databaseURL
        self.adminToken = adminToken
        self.secretKeys = secretKeys
        (publicBrokerHost, publicBrokerPort) = (amqp.endpoints[0].host, amqp.endpoints[0].port)
    }

    public init(environment: ServiceEnvironment) throws(ConfigurationError) {
        let amqp = try environment.amqpConfiguration()
        self.init(
            databaseURL: try environment.requireDatabaseURL(Self.databaseURL), adminToken: try environment.require(Self.adminToken),
            secretKeys: try environment.secretKeyring(), amqp: amqp)
        replicaDatabaseURL = try environment.databaseURL(Self.replicaDatabaseURL)
        httpHost = try environment.require(.httpHost)
        httpPort = try environment.integer(Self.httpPort)
        subscriptionLifetime = Double(try environment.integer(Self.subscriptionLifetimeDays)) * 86400
        prefetch = try environment.integer(Self.prefetch)
        confirmTimeout = .milliseconds(max(try environment.integer(Self.confirmTimeout), 1))
        let requests = try environment.integer(Self.appRequestsPerSecond), notifications = try environment.integer(Self.appNotificationsPerSecond)
        defaultRateLimit = RateLimit(requestsPerSecond: requests > 0 ? requests : nil, notificationsPerSecond: notifications > 0 ? notifications : nil)
        logging = LogSettings(environment: environment)
        if let address = environment.string(Self.publicBrokerAddress) {
            guard let colon = address.lastIndex(of: ":"), let port = Int(address[address.index(after: colon)...]) else {
                throw ConfigurationError("NOTIFY_PUBLIC_AMQP_ADDRESS: expected host:port")
            }
            (publicBrokerHost, publicBrokerPort) = (String(address[..<colon]), port)
        }
        brokerUserOverlap = TimeInterval(try environment.integer(Self.brokerUserOverlap))
        keyRotationOverlap = TimeInterval(try environment.integer(Self.keyRotationOverlap))
        maximumQueueDepth = max(try environment.integer(Self.maximumQueueDepth), 0)
        storageLag = .milliseconds(max(try environment.integer(Self.storageLag), 0))
        maximumStreamsPerUser = max(try environment.integer(Self.maximumStreamsPerUser), 1)
        maximumConnections = max(try environment.integer(Self.maximumConnections), 1)
        liveUnbindAfter = .seconds(max(try environment.integer(Self.liveUnbind), 0))
        outboundPolicy = try environment.outboundPolicy()
        isGivenBrokerAdministration = environment.string(Self.brokerAdministration) != nil
    }
}
