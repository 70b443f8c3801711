import Logging
import NotifyAMQP
import NotifyDatabase
import NotifyModels
import NotifyRuntime
import PostgresNIO

/// Wires storage together: database pool, migrations, command consumer, event publisher, health.
struct StorageService {
    let environment: ServiceEnvironment

    func run() async throws {
        let logger = ServiceRunner.bootstrapLogging(label: "storage", level: environment.string(.logLevel))
        let metrics = ServiceMetrics.bootstrap()
        let amqp = try environment.amqpConfiguration()
        let database = try DatabaseURL.makeClient(try environment.require(.databaseURL(role: "writer")), logger: logger)
        let prefetch = try environment.integer(StorageCommandLine.prefetch)
        let topology = AMQPTopology.workQueue(QueueNames.storageCommands)
            .merging(.workQueue(QueueNames.fanoutChanges))
        let publisher = AMQPPublisher(configuration: amqp, topology: topology, logger: logger)
        let handler = StorageCommandHandler(
            applier: CommandBatchApplier(client: database, logger: logger),
            emitter: ChangeEventEmitter(publisher: publisher),
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
        let databaseHealth = DatabaseHealth(client: database, logger: logger)
        let health = HealthServer(
            host: try environment.require(.httpHost), port: try environment.integer(.healthPort(default: 8081)),
            checks: ["amqp": { publisher.isConnected && consumer.isConnected && feedback.isConnected }, "database": { await databaseHealth.check() }],
            metrics: metrics, logger: logger)

        let sweeper = Sweeper(
            publisher: publisher,
            expiryInterval: .seconds(try environment.integer(StorageCommandLine.expirySweep)),
            tombstoneRetention: Double(try environment.integer(StorageCommandLine.tombstoneRetention)) * 86400,
            logger: logger)
        let migrations = Migrations(client: database, readerRole: try environment.require(StorageCommandLine.readerRole), logger: logger)

        try await ServiceRunner.run(
            [database, publisher, MigrationGate(migrations: migrations, then: [consumer, feedback], logger: logger), sweeper, health],
            logger: logger)
    }
}
