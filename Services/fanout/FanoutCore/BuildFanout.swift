import Foundation
import Logging
import NotifyAMQP
import NotifyDatabase
import NotifyModels
import NotifyRuntime
import NotifyStore
import PostgresNIO

/// Builds fanout: the read-only pool, the push-job publisher, the change consumer (interactive lane) and the broadcast
/// consumer (bulk lane), `/health` and `/metrics`. Nothing connects until the parts run.
public func buildFanout(configuration: FanoutConfiguration, logger: Logger, metrics: ServiceMetrics) throws -> ServiceParts {
    let amqp = configuration.amqp
    let database = try DatabaseURL.makeClient(configuration.databaseURL, logger: logger)
    let prefetch = configuration.prefetch
    let topology = FanoutTopology.all
    let publisher = AMQPPublisher(configuration: amqp, topology: topology, logger: logger)
    let lanes = FanoutLanes()
    let audiences = PostgresPushAudienceStore(client: database, logger: logger)
    let handler = ChangeFanoutHandler(
        resolver: SubscriptionResolver(store: audiences, cache: DeviceCache(usersPerGeneration: configuration.deviceCacheUsers)),
        publisher: publisher,
        lanes: lanes,
        logger: logger,
        visualFallbackDelay: configuration.visualFallbackDelay)
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
            audiences: audiences, publisher: publisher, lanes: lanes, logger: logger
        ).handle)
    let consumers = [(queue: QueueNames.fanoutChanges, consumer: consumer), (queue: QueueNames.fanoutBroadcasts, consumer: broadcastConsumer)]
    let databaseHealth = DatabaseHealth(client: database, logger: logger)
    let health = HealthServer(
        host: configuration.httpHost, port: configuration.healthPort,
        checks: ["amqp": { publisher.isConnected && consumers.allSatisfy { $0.consumer.isConnected } }, "database": { await databaseHealth.check() }],
        metrics: metrics, logger: logger)
    return ServiceParts(services: [database, publisher, consumer, broadcastConsumer, health], consumers: consumers, logger: logger)
}

/// The queues and exchanges fanout declares.
enum FanoutTopology {
    /// The push exchange and one work queue per provider and lane, so no push job is ever unroutable; the visual
    /// fallbacks' delay queue; the broadcast lane's queue.
    static let all: AMQPTopology = Platform.providers.flatMap { platform in PushLane.allCases.map { (platform, $0) } }.reduce(
        AMQPTopology.changeEvents.merging(.workQueue(QueueNames.fanoutBroadcasts))
            .merging(AMQPTopology(exchanges: [.init(name: QueueNames.pushExchange, type: "direct")]))
            .merging(.workQueue(QueueNames.pushVisualFallback))
    ) { topology, route in
        let queue = QueueNames.pushQueue(route.0, lane: route.1)
        return topology.merging(.workQueue(queue)).merging(AMQPTopology(bindings: [
            .init(queue: queue, exchange: QueueNames.pushExchange, routingKey: QueueNames.pushRoutingKey(route.0, lane: route.1)),
        ]))
    }
}
