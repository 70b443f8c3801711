import Logging
import NotifyAMQP
import NotifyBrokerAdmin
import NotifyDatabase
import NotifyModels
import NotifyRuntime
import NotifyStore
import PostgresNIO

/// Wires storage together: database pool, migrations, command consumer, event publisher, the broker's administration
/// (apps' broker users, the ingest dead-letter policy), health.
public struct StorageService {
    let environment: ServiceEnvironment

    static let readerRole = EnvironmentVariable(
        "NOTIFY_DATABASE_READER_ROLE", "role granted SELECT on every table (ingest and fanout read through it)", default: "notify_reader")
    static let prefetch = EnvironmentVariable(
        "NOTIFY_PREFETCH", "messages taken from the broker at once, each carrying up to 500 commands (applied in transactions of up to 2,000)",
        default: "64")

    static let expirySweep = EnvironmentVariable(
        "NOTIFY_EXPIRY_SWEEP_SECONDS", "how often expired notifications are turned into expiry changes", default: "5")
    static let tombstoneRetention = EnvironmentVariable(
        "NOTIFY_TOMBSTONE_RETENTION_DAYS",
        "how long deletions, expirations and the change log are kept for offline devices to sync; an older cursor must resync", default: "30")

    static let resealInterval = EnvironmentVariable(
        "NOTIFY_SECRET_RESEAL_SECONDS",
        "how often stored secrets sealed with another key than the first of NOTIFY_SECRET_KEYS are sealed again with it (also at start)",
        default: "300")

    public static let variables: [EnvironmentVariable] = [
        .amqpURL, .databaseURL(role: "the writer: storage is the only service that writes"), readerRole, prefetch, expirySweep, tombstoneRetention,
        .secretKeys, .secretKeysFile, resealInterval, .httpHost, .healthPort(default: 8081), .logLevel, .logFormat,
    ] + BrokerAdministrationSettings.variables

    public init(environment: ServiceEnvironment) {
        self.environment = environment
    }

    public func run() async throws {
        let logger = ServiceRunner.bootstrapLogging(
            label: "storage", level: environment.string(.logLevel), format: environment.string(.logFormat))
        let metrics = ServiceMetrics.bootstrap()
        let amqp = try environment.amqpConfiguration()
        let database = try DatabaseURL.makeClient(try environment.require(.databaseURL(role: "writer")), logger: logger)
        let prefetch = try environment.integer(Self.prefetch)
        let keyring = try environment.secretKeyring()
        let broker = try BrokerAdministrationSettings(environment: environment, amqp: amqp)
        let administration = broker.management.map { RabbitMQManagementClient(configuration: $0) }
        if administration == nil {
            logger.warning("NOTIFY_RABBITMQ_MANAGEMENT_URL is off: apps get no broker users, and notify.ingest.dead is not bounded")
        }
        let topology = AMQPTopology.workQueue(QueueNames.storageCommands)
            .merging(.changeEvents).merging(AMQPTopology.webhooks)
        let publisher = AMQPPublisher(configuration: amqp, topology: topology, logger: logger)
        let confirmed = ConfirmedOutbox(client: database, logger: logger)
        let handler = StorageCommandHandler(
            applier: CommandBatchApplier(client: database, logger: logger),
            emitter: ChangeEventEmitter(publisher: publisher),
            confirmed: confirmed,
            logger: logger)
        let consumer = AMQPConsumer(
            configuration: amqp, queue: QueueNames.storageCommands, topology: topology,
            options: .init(prefetch: prefetch, maximumBatch: prefetch),
            deadLetterPublisher: publisher, logger: logger,
            handler: handler.handle)
        let feedbackTopology = AMQPTopology.workQueue(QueueNames.pushFeedback)
        let feedback = AMQPConsumer(
            configuration: amqp, queue: QueueNames.pushFeedback, topology: feedbackTopology,
            options: .init(prefetch: 100, maximumBatch: 100), deadLetterPublisher: publisher, logger: logger,
            handler: FeedbackHandler(client: database, logger: logger).handle)
        let webhookOutcomes = AMQPConsumer(
            configuration: amqp, queue: WebhookOutcomeBatch.queue, topology: AMQPTopology.webhooks,
            options: .init(prefetch: 100, maximumBatch: 100), deadLetterPublisher: publisher, logger: logger,
            handler: WebhookOutcomeHandler(client: database, logger: logger).handle)
        let databaseHealth = DatabaseHealth(client: database, logger: logger)
        let health = HealthServer(
            host: try environment.require(.httpHost), port: try environment.integer(.healthPort(default: 8081)),
            checks: [
                "amqp": { publisher.isConnected && consumer.isConnected && feedback.isConnected && webhookOutcomes.isConnected },
                "database": { await databaseHealth.check() },
            ],
            metrics: metrics, logger: logger)

        let sweeper = Sweeper(
            publisher: publisher,
            expiryInterval: .seconds(try environment.integer(Self.expirySweep)),
            tombstoneRetention: Double(try environment.integer(Self.tombstoneRetention)) * 86400,
            logger: logger)
        let migrations = Migrations(client: database, readerRole: try environment.require(Self.readerRole), logger: logger)

        try await ServiceRunner.run(
            [
                database, publisher, confirmed,
                MigrationGate(
                    migrations: migrations,
                    then: [
                        consumer, feedback, webhookOutcomes, WebhookRelay(client: database, publisher: publisher, logger: logger),
                        SecretResealer(
                            client: database, keyring: keyring, interval: .seconds(max(try environment.integer(Self.resealInterval), 1)), logger: logger),
                    ] + (administration.map { [BrokerUserProvisioner(client: database, administration: $0, interval: broker.maintenanceInterval, logger: logger)] } ?? []),
                    logger: logger),
                sweeper, health,
            ] + (administration.map { [IngestDeadLetterPolicy(administration: $0, bounds: broker.deadLetterBounds, logger: logger)] } ?? []),
            logger: logger)
    }
}
