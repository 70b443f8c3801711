import Foundation
import NotifyAMQP
import NotifyRuntime

/// What fanout is told at start-up; `variables` are the environment it reads (and `fanout --help` lists).
public struct FanoutConfiguration: ServiceConfiguration {
    public var amqp: AMQPConfiguration
    /// The database, through the read-only role.
    public var databaseURL: String
    /// Change-event messages held from the broker at once (half of them make a batch).
    public var prefetch = 100
    /// Users whose devices are kept between batches, in each of two generations (0: none).
    public var deviceCacheUsers = 25_000
    /// How long after the shoulder tap an iOS device gets the alert of a notification with raw and visual content,
    /// unless it synced it by then (0: the alert at once).
    public var visualFallbackDelay: TimeInterval = 30
    /// The address `/health` and `/metrics` listen on.
    public var httpHost = "127.0.0.1"
    public var healthPort = 8082
    public var logging = LogSettings()

    static let databaseURL = EnvironmentVariable.databaseURL(role: "read-only")
    static let prefetch = EnvironmentVariable("NOTIFY_PREFETCH", "change-event messages held from the broker at once (half of them make a batch)", default: "100")
    static let deviceCacheUsers = EnvironmentVariable(
        "NOTIFY_DEVICE_CACHE_USERS", "users whose devices are kept between batches, in each of two generations (0: none)", default: "25000")
    static let visualFallback = EnvironmentVariable(
        "NOTIFY_VISUAL_FALLBACK_SECONDS",
        "a new notification with raw and visual content reaches an iOS device as a shoulder tap, and its alert follows this many seconds later unless the device synced it by then; 0 = the alert at once",
        default: "30")
    static let healthPort = EnvironmentVariable.healthPort(default: 8082)

    public static let variables: [EnvironmentVariable] = [
        .amqpURL, databaseURL, prefetch, deviceCacheUsers, visualFallback, .httpHost, healthPort, .logLevel, .logFormat,
    ]

    /// The defaults, with the database given.
    public init(databaseURL: String, amqp: AMQPConfiguration = AMQPConfiguration()) {
        self.amqp = amqp
        self.databaseURL = databaseURL
    }

    public init(environment: ServiceEnvironment) throws(ConfigurationError) {
        self.init(databaseURL: try environment.requireDatabaseURL(Self.databaseURL), amqp: try environment.amqpConfiguration())
        prefetch = try environment.integer(Self.prefetch)
        deviceCacheUsers = try environment.integer(Self.deviceCacheUsers)
        visualFallbackDelay = TimeInterval(max(try environment.integer(Self.visualFallback), 0))
        httpHost = try environment.require(.httpHost)
        healthPort = try environment.integer(Self.healthPort)
        logging = LogSettings(environment: environment)
    }
}
