import Foundation
import Logging
import NotifyAMQP
import NotifyModels
import NotifyRuntime
import Testing

@testable import StorageCore

/// Storage built whole from its configuration, in-process, as `storage` builds it: building connects to nothing, so
/// neither a broker nor a database is needed.
@Suite struct StorageBuildTests {
    private static let keys = SecretKeyring.generateEntry(id: "storage-build")
    private static let databaseURL = "postgres://notify_writer:writer-pw@db.internal:5433/notify"

    /// The configuration `storage` reads from an environment holding the required variables and `variables`.
    private static func configuration(_ variables: [String: String] = [:]) throws -> StorageConfiguration {
        let environment = ["NOTIFY_DATABASE_URL": databaseURL, "NOTIFY_SECRET_KEYS": keys].merging(variables) { $1 }
        return try StorageConfiguration(environment: ServiceEnvironment(StorageConfiguration.variables, environment: environment))
    }

    private static func build(_ configuration: StorageConfiguration) throws -> ServiceParts {
        try buildStorage(configuration: configuration, logger: Logger(label: "storage-build-tests"), metrics: ServiceMetrics())
    }

    /// Each setting's name and value, to compare two configurations whole.
    private static func settings(_ configuration: StorageConfiguration) -> [String: String] {
        Dictionary(uniqueKeysWithValues: Mirror(reflecting: configuration).children.map { ($0.label ?? "?", String(reflecting: $0.value)) })
    }

    @Test("unset variables take the defaults storage --help lists, which are those of a configuration made in code")
    func defaults() throws {
        let read = try Self.configuration()
        let made = StorageConfiguration(databaseURL: Self.databaseURL, secretKeys: try SecretKeyring(parsing: Self.keys))
        #expect(Self.settings(read) == Self.settings(made))
        #expect((read.prefetch, read.healthPort, read.httpHost, read.readerRole) == (64, 8081, "127.0.0.1", "notify_reader"))
        #expect((read.expirySweepInterval, read.tombstoneRetention, read.resealInterval) == (.seconds(5), 30 * 86_400, .seconds(300)))
        #expect((read.logging.level, read.logging.format) == (.info, .text))
        #expect(read.amqp.description == "amqp://guest@127.0.0.1:5672//")
        let management = try #require(read.brokerAdministration.management)
        #expect((management.baseURL, management.user) == ("http://127.0.0.1:15672", "guest"))
        #expect(read.brokerAdministration.deadLetterBounds == DeadLetterBounds(maximumMessages: 10_000, maximumBytes: 104_857_600, maximumAge: .seconds(604_800)))
    }

    @Test("each variable reaches its setting")
    func values() throws {
        let read = try Self.configuration([
            "NOTIFY_AMQP_URL": "amqp://notify:amqp-pw@rabbit-1:5673/notify", "NOTIFY_DATABASE_READER_ROLE": "reader", "NOTIFY_PREFETCH": "16",
            "NOTIFY_EXPIRY_SWEEP_SECONDS": "2", "NOTIFY_TOMBSTONE_RETENTION_DAYS": "7", "NOTIFY_SECRET_RESEAL_SECONDS": "0",
            "NOTIFY_HTTP_HOST": "0.0.0.0", "NOTIFY_HEALTH_PORT": "9081", "LOG_LEVEL": "debug", "LOG_FORMAT": "json",
            "NOTIFY_RABBITMQ_MANAGEMENT_URL": "off", "NOTIFY_BROKER_MAINTENANCE_SECONDS": "10", "NOTIFY_INGEST_DEAD_LETTER_MAX_MESSAGES": "5",
        ])
        #expect(read.amqp.description == "amqp://notify@rabbit-1:5673/notify")
        #expect(read.databaseURL == Self.databaseURL)
        #expect((read.readerRole, read.prefetch, read.httpHost, read.healthPort) == ("reader", 16, "0.0.0.0", 9081))
        // A reseal interval under a second is a second.
        #expect((read.expirySweepInterval, read.tombstoneRetention, read.resealInterval) == (.seconds(2), 7 * 86_400, .seconds(1)))
        #expect((read.logging.level, read.logging.format) == (.debug, .json))
        #expect(read.brokerAdministration.management == nil)
        #expect(read.brokerAdministration.maintenanceInterval == .seconds(10))
        #expect(read.brokerAdministration.deadLetterMaximumMessages == 5)
    }

    @Test("a bad value is refused with a message naming its variable", arguments: [
        ("NOTIFY_PREFETCH", "many", "NOTIFY_PREFETCH must be an integer, got 'many'"),
        ("NOTIFY_HEALTH_PORT", "http", "NOTIFY_HEALTH_PORT must be an integer, got 'http'"),
        ("NOTIFY_RABBITMQ_MANAGEMENT_URL", "rabbit:15672", "NOTIFY_RABBITMQ_MANAGEMENT_URL: expected http://user:password@host:port or off"),
        ("NOTIFY_INGEST_DEAD_LETTER_MAX_AGE_SECONDS", "a week", "NOTIFY_INGEST_DEAD_LETTER_MAX_AGE_SECONDS must be an integer, got 'a week'"),
        ("NOTIFY_AMQP_URL", "http://rabbit", "NOTIFY_AMQP_URL: expected an amqp://user:password@host:port/vhost URL, or several separated by commas"),
        ("NOTIFY_SECRET_KEYS", "no-key", "NOTIFY_SECRET_KEYS: each key is id:base64 (an entry has no ':')"),
        ("LOG_FORMAT", "xml", "LOG_FORMAT must be text or json, got 'xml'"),
        ("NOTIFY_DATABASE_URL", "mysql://notify:db-secret@db:3306/notify", "NOTIFY_DATABASE_URL: expected a postgres://user:password@host:port/database URL (its scheme is not postgres or postgresql)"),
    ])
    func badValue(variable: String, value: String, message: String) {
        let error = #expect(throws: ConfigurationError.self) { try Self.configuration([variable: value]) }
        #expect(error?.description == message)
    }

    @Test("without NOTIFY_DATABASE_URL, storage does not start and says what the variable is")
    func missingDatabase() {
        let error = #expect(throws: ConfigurationError.self) {
            try ServiceEnvironment(StorageConfiguration.variables, environment: ["NOTIFY_SECRET_KEYS": Self.keys])
        }
        #expect(error?.description.contains("NOTIFY_DATABASE_URL: PostgreSQL URL (the writer: storage is the only service that writes)") == true)
    }

    @Test("built: the pool, the publisher and the outbox first; the consumers of its three queues start once the migrations ran; health last but the dead-letter bounds")
    func built() throws {
        let parts = try Self.build(try Self.configuration())
        #expect(parts.services.map { "\(type(of: $0))" } == [
            "PostgresClient", "AMQPPublisher", "ConfirmedOutbox", "MigrationGate", "Sweeper", "HealthServer", "IngestDeadLetterPolicy",
        ])
        #expect(parts.consumers.map(\.queue) == [QueueNames.storageCommands, QueueNames.pushFeedback, WebhookOutcomeBatch.queue])
        let gate = try #require(parts.services.compactMap { $0 as? MigrationGate }.first)
        #expect(gate.then.map { "\(type(of: $0))" } == [
            "AMQPConsumer", "AMQPConsumer", "AMQPConsumer", "WebhookRelay", "SecretResealer", "BrokerUserProvisioner",
        ])
        #expect(gate.then.compactMap { ($0 as? AMQPConsumer).map(ObjectIdentifier.init) } == parts.consumers.map { ObjectIdentifier($0.consumer) })
        let bounds = try #require(parts.services.compactMap { $0 as? IngestDeadLetterPolicy }.first).bounds
        #expect(bounds == DeadLetterBounds(maximumMessages: 10_000, maximumBytes: 104_857_600, maximumAge: .seconds(604_800)))
    }

    @Test("built with NOTIFY_RABBITMQ_MANAGEMENT_URL=off: no broker users are provisioned and notify.ingest.dead is not bounded")
    func builtWithoutBrokerAdministration() throws {
        let parts = try Self.build(try Self.configuration(["NOTIFY_RABBITMQ_MANAGEMENT_URL": "off"]))
        #expect(parts.services.map { "\(type(of: $0))" } == ["PostgresClient", "AMQPPublisher", "ConfirmedOutbox", "MigrationGate", "Sweeper", "HealthServer"])
        let gate = try #require(parts.services.compactMap { $0 as? MigrationGate }.first)
        #expect(!gate.then.contains { $0 is BrokerUserProvisioner })
    }
}
