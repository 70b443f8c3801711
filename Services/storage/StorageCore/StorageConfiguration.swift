import Foundation
import NotifyAMQP
import NotifyModels
import NotifyRuntime

/// What storage is told at start-up; `variables` are the environment it reads (and `storage --help` lists).
public struct StorageConfiguration: ServiceConfiguration {
    public var amqp: AMQPConfiguration
    /// The writer's database: storage is the only service that writes.
    public var databaseURL: String
    /// The role the migrations grant reading every table (ingest and fanout read through it).
    public var readerRole = "notify_reader"
    /// Messages taken from `storage.commands` at once, each carrying up to 500 commands.
    public var prefetch = 64
    /// How often expired notifications and broadcasts are turned into expiry changes.
    public var expirySweepInterval: Duration = .seconds(5)
    /// How long deletions, expirations and the change log are kept for offline devices to sync.
    public var tombstoneRetention: TimeInterval = 30 * 86_400
    /// Seals the secrets stored for apps; what another key than the first sealed is sealed again with the first.
    public var secretKeys: SecretKeyring
    /// How often stored secrets sealed with another key than the first are looked for (also at start).
    public var resealInterval: Duration = .seconds(300)
    /// RabbitMQ's management API (apps' broker users, the bounds of `notify.ingest.dead`).
    public var brokerAdministration: BrokerAdministrationSettings
    /// The address `/health` and `/metrics` listen on.
    public var httpHost = "127.0.0.1"
    public var healthPort = 8081
    public var logging = LogSettings()

    static let databaseURL = EnvironmentVariable.databaseURL(role: "the writer: storage is the only service that writes")
    static let readerRole = EnvironmentVariable(
        "NOTIFY_DATABASE_READER_ROLE", "role granted reading every table (ingest and fanout read through it)", default: "notify_reader")
    static let prefetch = EnvironmentVariable(
        "NOTIFY_PREFETCH", "messages taken from the broker at once, each carrying up to 500 commands (applied in transactions of up to 2,000)",
        default: "64")
    static let expirySweep = EnvironmentVariable(
        "NOTIFY_EXPIRY_SWEEP_SECONDS", "how often expired notifications and broadcasts are turned into expiry changes", default: "5")
    static let tombstoneRetention = EnvironmentVariable(
        "NOTIFY_TOMBSTONE_RETENTION_DAYS",
        "how long deletions, expirations and the change log are kept for offline devices to sync; an older cursor must resync", default: "30")
    static let resealInterval = EnvironmentVariable(
        "NOTIFY_SECRET_RESEAL_SECONDS",
        "how often stored secrets sealed with another key than the first of NOTIFY_SECRET_KEYS are sealed again with it (also at start)",
        default: "300")
    static let healthPort = EnvironmentVariable.healthPort(default: 8081)

    public static let variables: [EnvironmentVariable] = [
        .amqpURL, databaseURL, readerRole, prefetch, expirySweep, tombstoneRetention,
        .secretKeys, .secretKeysFile, resealInterval, .httpHost, healthPort, .logLevel, .logFormat,
    ] + BrokerAdministrationSettings.variables

    /// The defaults, with the database and the keys given; the broker administered on `amqp`'s first node, as its user.
    public init(databaseURL: String, secretKeys: SecretKeyring, amqp: AMQPConfiguration = AMQPConfiguration()) {
        self.amqp = amqp
        self.databaseURL = databaseURL
        self.secretKeys = secretKeys
        brokerAdministration = BrokerAdministrationSettings(amqp: amqp)
    }

    public init(environment: ServiceEnvironment) throws(ConfigurationError) {
        let amqp = try environment.amqpConfiguration()
        self.init(databaseURL: try environment.requireDatabaseURL(Self.databaseURL), secretKeys: try environment.secretKeyring(), amqp: amqp)
        readerRole = try environment.require(Self.readerRole)
        prefetch = try environment.integer(Self.prefetch)
        expirySweepInterval = .seconds(try environment.integer(Self.expirySweep))
        tombstoneRetention = Double(try environment.integer(Self.tombstoneRetention)) * 86_400
        resealInterval = .seconds(max(try environment.integer(Self.resealInterval), 1))
        brokerAdministration = try BrokerAdministrationSettings(environment: environment, amqp: amqp)
        httpHost = try environment.require(.httpHost)
        healthPort = try environment.integer(Self.healthPort)
        logging = LogSettings(environment: environment)
    }
}
