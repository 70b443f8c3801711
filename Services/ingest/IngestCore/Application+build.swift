import Foundation
import Hummingbird
import Logging
import NotifyAMQP
import NotifyDatabase
import NotifyModels
import NotifyOutbound
import NotifyRuntime
import NotifyStore
import PostgresNIO
import ServiceLifecycle

/// Builds ingest: the HTTP API, the AMQP ingest consumer, the live-update listener, the command publisher and the
/// read-only pool, as one Hummingbird application whose services run (and shut down) with its server. Nothing connects
/// until it runs.
public func buildIngest(configuration: IngestConfiguration, logger: Logger, metrics: ServiceMetrics) throws -> some ApplicationProtocol {
    if configuration.isGivenBrokerAdministration {
        logger.warning(
            "NOTIFY_RABBITMQ_MANAGEMENT_URL is set but ingest ignores it: storage creates apps' broker users; give the broker administrator's credentials to storage only")
    }
    let database = try DatabaseURL.makeClient(configuration.databaseURL, maximumConnections: 16, logger: logger)
    let replica = try configuration.replicaDatabaseURL.map { url in
        let standby = try DatabaseURL.clientConfiguration(url, maximumConnections: 16)
        logger.info(
            "the changes feed and history are read from a standby",
            metadata: ["host": "\(standby.host ?? "?")", "port": "\(standby.port.map(String.init) ?? "?")"])
        return PostgresClient(configuration: standby, backgroundLogger: logger)
    }
    let pools: [any Service] = [database] + (replica.map { [$0] } ?? [])
    let publisher = AMQPPublisher(
        configuration: configuration.amqp, topology: AMQPTopology.workQueue(QueueNames.storageCommands).merging(IngestTopology.ingest),
        confirmTimeout: configuration.confirmTimeout, logger: logger)
    let databaseHealth = DatabaseHealth(client: database, logger: logger)
    let appStore = PostgresAppStore(client: database, logger: logger)
    let appliedCommands = AppliedCommandWatch(client: database, logger: logger)
    let pacing = configuration.storageLag > .zero ? StoragePacing(announcements: appliedCommands, allowedLag: configuration.storageLag) : nil
    let sender = CommandSender(publisher: publisher, pacing: pacing, logger: logger)
    let identityDocuments = HTTPIdentityDocumentFetcher(policy: configuration.outboundPolicy)
    let liveQueue = IngestTopology.liveQueue()
    let liveBindings = AMQPQueueBindings(configuration: configuration.amqp, logger: logger)
    let liveBinding = LiveQueueBinding(bindings: liveBindings, queue: liveQueue.name, logger: logger)
    let dependencies = IngestDependencies(
        adminToken: configuration.adminToken, apps: AppDirectory(source: StoredAppSource(store: appStore, keyring: configuration.secretKeys)),
        appStore: appStore,
        sender: sender, database: database,
        notifications: PostgresNotificationStore(client: database, logger: logger),
        replicaNotifications: replica.map { PostgresNotificationStore(client: $0, logger: logger) },
        deliveryLog: PostgresDeliveryLogStore(client: database, logger: logger), devices: PostgresDeviceStore(client: database, logger: logger),
        brokerAddress: .init(host: configuration.publicBrokerHost, port: configuration.publicBrokerPort, virtualHost: configuration.amqp.virtualHost),
        appliedCommands: appliedCommands,
        hub: LiveHub(
            maximumStreamsPerUser: configuration.maximumStreamsPerUser, binding: liveBinding, unbindAfter: configuration.liveUnbindAfter,
            logger: logger),
        subscriptionLifetime: configuration.subscriptionLifetime,
        healthChecks: ["amqp": { publisher.isConnected }, "database": { await databaseHealth.check() }], logger: logger,
        keyring: configuration.secretKeys, brokerUserOverlap: configuration.brokerUserOverlap, keyRotationOverlap: configuration.keyRotationOverlap,
        limiter: PublishRateLimiter(defaults: configuration.defaultRateLimit),
        backlog: PipelineBacklog(maximumDepth: configuration.maximumQueueDepth),
        outbound: OutboundURLCheck(policy: configuration.outboundPolicy),
        identityKeys: IdentityProviderKeys(
            fetcher: identityDocuments, plainHTTPHosts: configuration.outboundPolicy.allowance.plainHTTPHosts, logger: logger))
    let keyUseReporter = APIKeyUseReporter(recorder: dependencies.keyUses, sender: sender, logger: logger)
    let router = buildRouter(dependencies)
    metrics.addRoute(to: router)

    let consumer = AMQPConsumer(
        configuration: configuration.amqp, queue: QueueNames.ingestQueue, topology: IngestTopology.ingest,
        options: .init(prefetch: configuration.prefetch, maximumBatch: configuration.prefetch), deadLetterPublisher: publisher, logger: logger,
        handler: AMQPIngestHandler(
            apps: dependencies.apps, contract: dependencies.contract, sender: dependencies.sender, limiter: dependencies.limiter,
            backlog: dependencies.backlog, replies: publisher,
            logger: logger
        ).handle)
    let polling = PollIngestion(
        store: appStore, intake: dependencies.intake, targets: dependencies.contract.targets, sender: sender,
        keyring: configuration.secretKeys, http: OutboundHTTPClient(policy: configuration.outboundPolicy, readTimeout: .seconds(10)),
        leases: PollLeases(configuration: try DatabaseURL.connectionConfiguration(configuration.databaseURL), logger: logger), logger: logger)
    // One connection reads the queues: how many ingest instances consume notify.ingest (each takes its share of the
    // apps' rate limits), and the pipeline's depths when a limit is set.
    let queueReader = AMQPQueueDepths(configuration: configuration.amqp, logger: logger)
    var backlogServices: [any Service] = [queueReader, IngestInstanceCount(reader: queueReader, limiter: dependencies.limiter, logger: logger)]
    if configuration.maximumQueueDepth > 0 {
        backlogServices.append(BacklogMonitor(depths: queueReader, backlog: dependencies.backlog, logger: logger))
    }
    let liveListener = AMQPConsumer(
        configuration: configuration.amqp, queue: liveQueue.name, topology: liveQueue.topology,
        options: .init(prefetch: 100, maximumBatch: 100), logger: logger, handler: dependencies.hub.handle)

    // The server shuts down first (live streams end as it begins), then the services in reverse: the live hub, the
    // app-change and applied-command watches, the consumers and the live queue's binder, the publisher, the pools.
    return Application(
        router: router,
        configuration: ApplicationConfiguration(
            address: .hostname(configuration.httpHost, port: configuration.httpPort), serverName: "notify-ingest",
            // Beyond it new connections wait in the listen backlog until one closes (Hummingbird stops accepting).
            availableConnectionsDelegate: .maximum(configuration.maximumConnections, logger: logger)),
        services: pools + [
            publisher, consumer, liveListener, liveBindings, dependencies.appliedCommands,
            AppChangeWatch(client: database, apps: dependencies.apps, logger: logger), dependencies.hub, polling, keyUseReporter, identityDocuments,
        ]
            + backlogServices,
        logger: logger)
}

/// What ingest's routes use; `buildRouter` wires them. Tests build the router with an app directory of their own and
/// a publisher that records what it is given, and run it in-process.
struct IngestDependencies: Sendable {
    var adminToken: String
    var apps: AppDirectory
    /// Apps and their settings as stored (the operator's and app servers' calls read them back).
    var appStore: any AppStore
    var sender: CommandSender
    var database: PostgresClient
    /// Notifications, their changes and history as devices see them (the primary's).
    var notifications: any NotificationStore
    /// The same on a hot standby, for the reads that tolerate lag (`LagTolerantReads`); nil: those read `notifications`.
    var replicaNotifications: (any NotificationStore)?
    /// What became of each push.
    var deliveryLog: any DeliveryLogStore
    /// Users' devices and the app's event sources.
    var devices: any DeviceStore
    /// Where app servers reach the broker, answered with their broker credentials.
    var brokerAddress: BrokerAccess.PublicAddress
    var appliedCommands: AppliedCommandWatch
    var hub: LiveHub
    var subscriptionLifetime: TimeInterval
    var healthChecks: [String: HealthServer.Check]
    var logger: Logger
    /// Seals the secrets stored for apps before they leave this process.
    var keyring: SecretKeyring
    /// How long a rotated broker user stays accepted unless the request says.
    var brokerUserOverlap: TimeInterval = 86400
    /// How long a rotated API key or client signing key stays accepted unless the request says.
    var keyRotationOverlap: TimeInterval = 86400
    var intake = NotificationIntake(validator: NotificationValidator())
    /// Subscription owners, event sources and their members (nil: the database, through the read-only role).
    var targets: (any TargetDirectory)?
    /// Apps' publish rate limits on this instance.
    var limiter = PublishRateLimiter(defaults: RateLimit())
    /// Whether the pipeline is too far behind to take publishes (off unless a depth limit is set).
    var backlog = PipelineBacklog(maximumDepth: 0)
    /// Refuses the URLs the service must not call (public addresses only unless the operator admits more).
    var outbound = OutboundURLCheck(policy: OutboundPolicy())
    /// The uses of scoped API keys, sent to storage now and then (`APIKeyUseReporter`).
    var keyUses = APIKeyUseRecorder()
    /// The keys of apps' identity providers, which check the user tokens those sign.
    var identityKeys: IdentityProviderKeys

    /// The publish contract both transports use.
    var contract: PublishContract {
        PublishContract(intake: intake, targets: targets ?? PostgresTargetDirectory(client: database, logger: logger))
    }
}

/// Every HTTP route of ingest.
func buildRouter(_ dependencies: IngestDependencies) -> Router<BasicRequestContext> {
    let logger = dependencies.logger
    let authenticator = Authenticator(
        adminToken: dependencies.adminToken, apps: dependencies.apps, identityKeys: dependencies.identityKeys, logger: logger,
        keyUses: dependencies.keyUses)
    let visibility = WriteVisibility(sender: dependencies.sender, watch: dependencies.appliedCommands)
    let appStore = dependencies.appStore
    let reader = dependencies.notifications
    let feed = LagTolerantReads(primary: reader, replica: dependencies.replicaNotifications, logger: logger)
    let changer = StateChanger(reader: reader, visibility: visibility)

    let router = Router()
    router.add(middleware: MetricsMiddleware())
    router.add(middleware: JSONErrorMiddleware())
    router.get("/health") { _, _ in try await HealthReport.response(dependencies.healthChecks) }
    router.get("/openapi.yaml") { _, _ in
        Response(status: .ok, headers: [.contentType: "application/yaml"], body: ResponseBody(byteBuffer: ByteBuffer(string: OpenAPIDocument.yaml + "\n")))
    }
    OperatorRoutes(
        authenticator: authenticator, visibility: visibility, store: appStore, sender: dependencies.sender,
        brokerAccess: BrokerAccess(
            address: dependencies.brokerAddress, defaultOverlap: dependencies.brokerUserOverlap, visibility: visibility, store: appStore, logger: logger),
        keyring: dependencies.keyring, outbound: dependencies.outbound
    ).register(on: router)
    AppListingRoutes(authenticator: authenticator, store: appStore).register(on: router)
    APIKeyRoutes(authenticator: authenticator, visibility: visibility, store: appStore).register(on: router)
    KeyRotationRoutes(
        authenticator: authenticator, visibility: visibility, store: appStore, keyring: dependencies.keyring, defaultOverlap: dependencies.keyRotationOverlap
    ).register(on: router)
    let admission = PublishAdmission(
        authenticator: authenticator, sender: dependencies.sender, limiter: dependencies.limiter, backlog: dependencies.backlog)
    PublishRoutes(admission: admission, contract: dependencies.contract).register(on: router)
    GraphNotificationRoutes(admission: admission, contract: dependencies.contract).register(on: router)
    DeviceRoutes(
        authenticator: authenticator, sender: dependencies.sender, visibility: visibility, devices: dependencies.devices,
        targets: dependencies.contract.targets, subscriptionLifetime: dependencies.subscriptionLifetime, outbound: dependencies.outbound
    ).register(on: router)
    EventSourceRoutes(authenticator: authenticator, visibility: visibility, devices: dependencies.devices).register(on: router)
    BadgeRoutes(authenticator: authenticator, visibility: visibility, store: appStore).register(on: router)
    PollSourceRoutes(authenticator: authenticator, visibility: visibility, store: appStore, keyring: dependencies.keyring, outbound: dependencies.outbound)
        .register(on: router)
    WebhookRoutes(authenticator: authenticator, visibility: visibility, store: appStore, keyring: dependencies.keyring, outbound: dependencies.outbound)
        .register(on: router)
    MyNotificationRoutes(authenticator: authenticator, reader: reader, feed: feed, changer: changer, sender: dependencies.sender).register(on: router)
    AppNotificationRoutes(authenticator: authenticator, deliveryLog: dependencies.deliveryLog, changer: changer).register(on: router)
    StreamRoutes(authenticator: authenticator, reader: reader, hub: dependencies.hub, logger: logger).register(on: router)
    return router
}

/// The queues and exchanges ingest declares.
enum IngestTopology {
    /// App servers publish to `notify.ingest` (topic) with the appId as routing key.
    static let ingest = AMQPTopology.workQueue(QueueNames.ingestQueue)
        .merging(AMQPTopology(
            exchanges: [.init(name: QueueNames.ingestExchange, type: "topic")],
            bindings: [.init(queue: QueueNames.ingestQueue, exchange: QueueNames.ingestExchange, routingKey: "#")]))

    /// Every instance gets every change batch on a queue of its own, gone when the instance is (bound at each connect;
    /// while the instance holds no live stream, `LiveQueueBinding` unbinds it, over AMQP).
    static func liveQueue() -> (name: String, topology: AMQPTopology) {
        let name = "notify.live.\(UUID().lowercasedString)"
        return (name, AMQPTopology(
            exchanges: [.init(name: QueueNames.changesExchange, type: "fanout")],
            queues: [.init(name: name, deadLetterQueue: nil, deliveryLimit: nil, durable: false)],
            bindings: [.init(queue: name, exchange: QueueNames.changesExchange, routingKey: "")]))
    }
}
