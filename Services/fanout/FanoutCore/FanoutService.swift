import Foundation
import NotifyAMQP
import NotifyDatabase
import NotifyModels
import NotifyRuntime
import PostgresNIO

/// Wires fanout together: read-only database pool, the change consumer (interactive lane) and the broadcast consumer
/// (bulk lane), push-job publisher, health.
public struct FanoutService {
    let environment: ServiceEnvironment

    static let prefetch = EnvironmentVariable("NOTIFY_PREFETCH", "change-event messages held from the broker at once (half of them make a batch)", default: "100")

    static let deviceCacheUsers = EnvironmentVariable(
        "NOTIFY_DEVICE_CACHE_USERS", "users whose devices are kept between batches, in each of two generations (0: none)", default: "25000")

    static let visualFallback = EnvironmentVariable(
        "NOTIFY_VISUAL_FALLBACK_SECONDS",
        "a new notification with raw and visual content reaches an iOS device as a shoulder tap, and its alert follows this many seconds later unless the device synced it by then; 0 = the alert at once",
        default: "30")

    public static let variables: [EnvironmentVariable] = [
        .amqpURL, .databaseURL(role: "read-only"), prefetch, deviceCacheUsers, visualFallback, .httpHost, .healthPort(default: 8082), .logLevel, .logFormat,
    ]

    public init(environment: ServiceEnvironment) {
        self.environment = environment
    }

    /// The push exchange and one work queue per provider and lane, so no push job is ever unroutable; the visual
    /// fallbacks' delay queue; the broadcast lane's queue.
    static let topology: AMQPTopology = Platform.providers.flatMap { platform in PushLane.allCases.map { (platform, $0) } }.reduce(
        AMQPTopology.changeEvents.merging(.workQueue(QueueNames.fanoutBroadcasts))
            .merging(AMQPTopology(exchanges: [.init(name: QueueNames.pushExchange, type: "direct")]))
            .merging(.workQueue(QueueNames.pushVisualFallback))
    ) { topology, route in
        let queue = QueueNames.pushQueue(route.0, lane: route.1)
        return topology.merging(.workQueue(queue)).merging(AMQPTopology(bindings: [
            .init(queue: queue, exchange: QueueNames.pushExchange, routingKey: QueueNames.pushRoutingKey(route.0, lane: route.1)),
        ]))
    }

    public func run() async throws {
        let logger = ServiceRunner.bootstrapLogging(
            label: "fanout", level: environment.string(.logLevel), format: environment.string(.logFormat))
        let metrics = ServiceMetrics.bootstrap()
        let amqp = try environment.amqpConfiguration()
        let database = try DatabaseURL.makeClient(try environment.require(.databaseURL(role: "reader")), logger: logger)
        let prefetch = try environment.integer(Self.prefetch)
        let topology = Self.topology
        let publisher = AMQPPublisher(configuration: amqp, topology: topology, logger: logger)
        let lanes = FanoutLanes()
        let handler = ChangeFanoutHandler(
            resolver: SubscriptionResolver(
                client: database, cache: DeviceCache(usersPerGeneration: try environment.integer(Self.deviceCacheUsers)), logger: logger),
            publisher: publisher,
            lanes: lanes,
            logger: logger,
            visualFallbackDelay: TimeInterval(max(try environment.integer(Self.visualFallback), 0)))
        let consumer = AMQPConsumer(
            configuration: amqp, queue: QueueNames.fanoutChanges, topology: topology,
            // Two batches, each at most half the prefetch: one is prepared while the other publishes.
            options: .init(prefetch: prefetch, maximumBatch: max(prefetch / 2, 1), concurrentBatches: 2, inOrder: true),
            deadLetterPublisher: publisher, logger: logger, orderedHandler: handler.handle)
        // Up to four broadcasts at once, each streaming its pages: one app's broadcast to millions does not hold another's
        // until it ends. (Pushes are not ordered in any case: each carries its change's sequence, and the client syncs.)
        let broadcastConsumer = AMQPConsumer(
            configuration: amqp, queue: QueueNames.fanoutBroadcasts, topology: topology,
            options: .init(prefetch: 4, maximumBatch: 1, concurrentBatches: 4),
            deadLetterPublisher: publisher, logger: logger,
            handler: BroadcastFanoutHandler(
                broadcasts: BroadcastStreamer(client: database, logger: logger), publisher: publisher, lanes: lanes, logger: logger
            ).handle)
        let databaseHealth = DatabaseHealth(client: database, logger: logger)
        let health = HealthServer(
            host: try environment.require(.httpHost), port: try environment.integer(.healthPort(default: 8082)),
            checks: ["amqp": { publisher.isConnected && consumer.isConnected && broadcastConsumer.isConnected }, "database": { await databaseHealth.check() }],
            metrics: metrics, logger: logger)
        try await ServiceRunner.run([database, publisher, consumer, broadcastConsumer, health], logger: logger)
    }
}
