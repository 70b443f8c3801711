import Logging
import NotifyAMQP
import NotifyBrokerAdmin
import NotifyDatabase
import NotifyModels
import NotifyRuntime
import NotifyStore
import PostgresNIO
import ServiceLifecycle

/// Builds storage: the writer's pool, the event publisher, the confirmed outbox, then (once the migrations ran) the
/// consumers of `storage.commands`, `push.feedback` and `webhooks.outcomes`, the webhook relay, secret re-sealing and
/// apps' broker users; the sweeper, `/health` and `/metrics`, the bounds of `notify.ingest.dead`. Nothing connects
/// until the parts run.
public func buildStorage(configuration: StorageConfiguration, logger: Logger, metrics: ServiceMetrics) throws -> ServiceParts {
    let amqp = configuration.amqp
    let database = try DatabaseURL.makeClient(configuration.databaseURL, logger: logger)
    let broker = configuration.brokerAdministration
    let administration = broker.management.map { RabbitMQManagementClient(configuration: $0) }
    if administration == nil {
        logger.warning("NOTIFY_RABBITMQ_MANAGEMENT_URL is off: apps get no broker users, and notify.ingest.dead is not bounded")
    }
    let topology = AMQPTopology.workQueue(QueueNames.storageCommands)
        .merging(.changeEvents).merging(AMQPTopology.webhooks)
    let publisher = AMQPPublisher(configuration: amqp, topology: topology, logger: logger)
    let applier = CommandBatchApplier(client: database, logger: logger)
    let confirmed = ConfirmedOutbox(applier: applier, logger: logger)
    let handler = StorageCommandHandler(
        applier: applier,
        emitter: ChangeEventEmitter(publisher: publisher),
        confirmed: confirmed,
        logger: logger)
    let consumer = AMQPConsumer(
        configuration: amqp, queue: QueueNames.storageCommands, topology: topology,
        options: .init(prefetch: configuration.prefetch, maximumBatch: configuration.prefetch),
        deadLetterPublisher: publisher, logger: logger,
        handler: handler.handle)
    let feedbackTopology = AMQPTopology.workQueue(QueueNames.pushFeedback)
    let feedback = AMQPConsumer(
        configuration: amqp, queue: QueueNames.pushFeedback, topology: feedbackTopology,
        options: .init(prefetch: 100, maximumBatch: 100), deadLetterPublisher: publisher, logger: logger,
        handler: FeedbackHandler(store: PostgresDeliveryLogStore(client: database, logger: logger), logger: logger).handle)
    let webhookOutcomes = AMQPConsumer(
        configuration: amqp, queue: WebhookOutcomeBatch.queue, topology: AMQPTopology.webhooks,
        options: .init(prefetch: 100, maximumBatch: 100), deadLetterPublisher: publisher, logger: logger,
        handler: WebhookOutcomeHandler(store: WebhookEventStore(client: database, logger: logger), logger: logger).handle)
    let consumers = [
        (queue: QueueNames.storageCommands, consumer: consumer), (queue: QueueNames.pushFeedback, consumer: feedback),
        (queue: WebhookOutcomeBatch.queue, consumer: webhookOutcomes),
    ]
    let databaseHealth = DatabaseHealth(client: database, logger: logger)
    let health = HealthServer(
        host: configuration.httpHost, port: configuration.healthPort,
        checks: [
            "amqp": { publisher.isConnected && consumers.allSatisfy { $0.consumer.isConnected } },
            "database": { await databaseHealth.check() },
        ],
        metrics: metrics, logger: logger)
    let sweeper = Sweeper(
        publisher: publisher, expiryInterval: configuration.expirySweepInterval, tombstoneRetention: configuration.tombstoneRetention,
        logger: logger)
    let migrations = Migrations(client: database, readerRole: configuration.readerRole, logger: logger)
    let afterMigrations: [any Service] = consumers.map(\.consumer) + [
        WebhookRelay(client: database, publisher: publisher, logger: logger),
        SecretResealer(store: SealedSecretStore(client: database, logger: logger), keyring: configuration.secretKeys, interval: configuration.resealInterval, logger: logger),
    ] + (administration.map { [BrokerUserProvisioner(client: database, administration: $0, interval: broker.maintenanceInterval, logger: logger)] } ?? [])
    return ServiceParts(
        services: [
            database, publisher, confirmed, MigrationGate(migrations: migrations, then: afterMigrations, logger: logger), sweeper, health,
        ] + (administration.map { [IngestDeadLetterPolicy(administration: $0, bounds: broker.deadLetterBounds, logger: logger)] } ?? []),
        consumers: consumers, logger: logger)
}
