import Foundation
import Hummingbird
import Logging
import NotifyAMQP
import NotifyDatabase
import NotifyModels
import NotifyRuntime
import PostgresNIO

/// Wires ingest together: the HTTP API, the AMQP ingest consumer, the command publisher, the read-only pool.
struct IngestService {
    let environment: ServiceEnvironment

    /// App servers publish to `notify.ingest` (topic) with the appId as routing key.
    static let ingestTopology = AMQPTopology.workQueue(QueueNames.ingestQueue)
        .merging(AMQPTopology(
            exchanges: [.init(name: QueueNames.ingestExchange, type: "topic")],
            bindings: [.init(queue: QueueNames.ingestQueue, exchange: QueueNames.ingestExchange, routingKey: "#")]))

    func run() async throws {
        let logger = ServiceRunner.bootstrapLogging(label: "ingest", level: environment.string(.logLevel))
        let metrics = ServiceMetrics.bootstrap()
        let amqp = try environment.amqpConfiguration()
        let database = try DatabaseURL.makeClient(try environment.require(.databaseURL(role: "reader")), maximumConnections: 16, logger: logger)
        let publisher = AMQPPublisher(
            configuration: amqp, topology: AMQPTopology.workQueue(QueueNames.storageCommands).merging(Self.ingestTopology), logger: logger)
        let apps = AppDirectory(client: database, logger: logger)
        let authenticator = Authenticator(adminToken: try environment.require(IngestCommandLine.adminToken), apps: apps, logger: logger)
        let sender = CommandSender(publisher: publisher, logger: logger)
        let appliedCommands = AppliedCommandWatch(client: database, logger: logger)
        let visibility = WriteVisibility(client: database, sender: sender, watch: appliedCommands, logger: logger)
        let intake = NotificationIntake(validator: NotificationValidator())
        let databaseHealth = DatabaseHealth(client: database, logger: logger)

        let router = Router()
        router.add(middleware: MetricsMiddleware())
        router.get("/health") { _, _ in
            try await HealthReport.response(["amqp": { publisher.isConnected }, "database": { await databaseHealth.check() }])
        }
        metrics.addRoute(to: router)
        OperatorRoutes(authenticator: authenticator, visibility: visibility).register(on: router)
        PublishRoutes(authenticator: authenticator, intake: intake, sender: sender).register(on: router)
        DeviceRoutes(
            authenticator: authenticator, sender: sender, visibility: visibility,
            subscriptionLifetime: Double(try environment.integer(IngestCommandLine.subscriptionLifetimeDays)) * 86400
        ).register(on: router)
        let reader = NotificationReader(client: database, logger: logger)
        let changer = StateChanger(reader: reader, visibility: visibility)
        MyNotificationRoutes(authenticator: authenticator, reader: reader, changer: changer).register(on: router)
        AppNotificationRoutes(authenticator: authenticator, reader: reader, changer: changer).register(on: router)
        let hub = LiveHub()
        StreamRoutes(authenticator: authenticator, reader: reader, hub: hub, logger: logger).register(on: router)
        let http = Application(
            router: router,
            configuration: ApplicationConfiguration(
                address: .hostname(try environment.require(.httpHost), port: try environment.integer(IngestCommandLine.httpPort)),
                serverName: "notify-ingest"),
            logger: logger)

        let prefetch = try environment.integer(IngestCommandLine.prefetch)
        let consumer = AMQPConsumer(
            configuration: amqp, queue: QueueNames.ingestQueue, topology: Self.ingestTopology,
            options: .init(prefetch: prefetch, maximumBatch: prefetch), deadLetterPublisher: publisher, logger: logger,
            handler: AMQPIngestHandler(apps: apps, intake: intake, sender: sender, replies: publisher, logger: logger).handle)

        // Every instance gets every change batch on a queue of its own, gone when the instance is.
        let liveQueue = "notify.live.\(UUID().uuidString.lowercased())"
        let liveListener = AMQPConsumer(
            configuration: amqp, queue: liveQueue,
            topology: AMQPTopology(
                exchanges: [.init(name: QueueNames.liveExchange, type: "fanout")],
                queues: [.init(name: liveQueue, deadLetterQueue: nil, deliveryLimit: nil, durable: false)],
                bindings: [.init(queue: liveQueue, exchange: QueueNames.liveExchange, routingKey: "")]),
            options: .init(prefetch: 100, maximumBatch: 100), logger: logger, handler: hub.handle)

        // Shut down in reverse: live streams end first, then the HTTP server drains, then the applied-command watch, the consumers, the publisher.
        try await ServiceRunner.run([database, publisher, consumer, liveListener, appliedCommands, http, hub], logger: logger)
    }
}
