import Logging
import NotifyAMQP
import NotifyAPNs
import NotifyAPNsCore
import NotifyDatabase
import NotifyModels
import NotifyOutbound
import NotifyRuntime
import NotifyStore
import PostgresNIO
import ServiceLifecycle

/// Builds push-dispatch: the read-only pool, the provider connections (APNs over HTTP/2, HTTP clients for the others and
/// for webhooks), the publisher, a consumer per provider and lane, the webhook consumer, the consumers of the retry,
/// visual-fallback and parked queues, the push endpoint audit, `/health` and `/metrics`. Nothing connects until the
/// parts run.
public func buildPushDispatch(configuration: PushDispatchConfiguration, logger: Logger, metrics: ServiceMetrics) throws -> ServiceParts {
    let amqp = configuration.amqp
    let database = try DatabaseURL.makeClient(configuration.databaseURL, logger: logger)
    let keyring = configuration.secretKeys
    let trustedCAFile = configuration.trustedCAFile
    let outboundPolicy = configuration.outboundPolicy
    // Every URL here is an app's or a device's (endpoints, channels, token endpoints, webhooks): checked by the policy.
    let connections = OutboundHTTPClient(policy: outboundPolicy, trustedCAFile: trustedCAFile, maximumDestinations: 1024)
    let webhookConnections = OutboundHTTPClient(policy: outboundPolicy, trustedCAFile: trustedCAFile, readTimeout: .seconds(10))
    let apnsConnections = try APNsTransport(trustedCAFile: trustedCAFile, policy: outboundPolicy)
    let retryPolicy = RetryPolicy(delaysMilliseconds: configuration.retryDelaysMilliseconds)
    let providers: [any PushProvider] = [
        APNsProvider(
            client: APNsClient(connections: apnsConnections, signer: APNsTokenSigner()),
            credentials: CredentialStore(platform: .apns, client: database, keyring: keyring, logger: logger)),
        FCMProvider(
            client: FCMClient(http: connections, tokens: AccessTokenCache()),
            credentials: CredentialStore(platform: .fcm, client: database, keyring: keyring, logger: logger)),
        WebPushProvider(
            client: WebPushClient(http: connections, vapid: VAPIDSigner()),
            credentials: CredentialStore(platform: .webpush, client: database, keyring: keyring, logger: logger)),
        WNSProvider(
            client: WNSClient(http: connections, tokens: AccessTokenCache()),
            credentials: CredentialStore(platform: .wns, client: database, keyring: keyring, logger: logger)),
    ]
    let topology = providers.reduce(AMQPTopology.workQueue(QueueNames.pushFeedback).merging(WebhookDispatcher.topology)) { topology, provider in
        PushLane.allCases.reduce(topology) { $0.merging(.workQueue(QueueNames.pushQueue(provider.platform, lane: $1))) }
    }.merging(retryPolicy.topology).merging(.workQueue(QueueNames.pushVisualFallback)).merging(.workQueue(QueueNames.pushParked))
    let publisher = AMQPPublisher(configuration: amqp, topology: topology, logger: logger)
    let (concurrency, appConcurrency) = (configuration.concurrency, configuration.appConcurrency)
    let prefetch = (interactive: configuration.prefetch, bulk: configuration.bulkPrefetch)
    // Per provider, a consumer per lane sharing one in-flight budget (interactive first, an app's share each).
    // Each interactive message is a batch of its own: a batch is settled once all its jobs are answered or parked, so
    // a batch of several holding one slow app's job would hold the other messages of the prefetch with it (a slow
    // app then holds at most its share's worth of messages, well under the prefetch).
    let pushConsumers = providers.flatMap { provider in
        let budget = InFlightBudget(capacity: concurrency, appShare: appConcurrency)
        let dispatchMetrics = DispatchMetrics(provider: provider.platform)
        return PushLane.allCases.map { lane in
            let queue = QueueNames.pushQueue(provider.platform, lane: lane)
            let lanePrefetch = lane == .interactive ? prefetch.interactive : prefetch.bulk
            return (queue: queue, consumer: AMQPConsumer(
                configuration: amqp, queue: queue, topology: topology,
                options: .init(prefetch: lanePrefetch, maximumBatch: lane == .interactive ? 1 : max(lanePrefetch / 4, 1), concurrentBatches: 4),
                deadLetterPublisher: publisher, logger: logger,
                deferringHandler: PushDispatchHandler(
                    provider: provider, lane: lane, budget: budget, publisher: publisher,
                    reporter: OutcomeReporter(publisher: publisher, interval: configuration.feedbackInterval, maximumDeliveries: lanePrefetch / 2, logger: logger),
                    retryPolicy: retryPolicy, metrics: dispatchMetrics, logger: logger,
                    syncCheck: DeviceSyncCheck(client: database, logger: logger)
                ).handle))
        }
    }
    // Each app's events in a lane of their own (WebhookLanes), the apps at once: an app's failing or slow receiver
    // holds only its own events, which wait in webhooks.retry while it backs off. Each event is a batch of its own,
    // settled when its attempt ends and not in the order taken (the lanes keep each app's order): an attempt that
    // hangs holds its own message only. Settled in order, the messages taken after it waited for it, filled the
    // prefetch, and stopped every app's events until its timeout. The handler is called in the order the events
    // arrived (startsInOrder), so each takes its place in its lane in that order.
    let webhooks = AMQPConsumer(
        configuration: amqp, queue: WebhookDelivery.queue, topology: topology,
        options: .init(prefetch: 64, maximumBatch: 1, concurrentBatches: 4, startsInOrder: true),
        deadLetterPublisher: publisher, logger: logger,
        deferringHandler: WebhookDispatcher(
            http: webhookConnections, database: database, publisher: publisher, keyring: keyring, lanes: WebhookLanes(), logger: logger,
            maximumAttempts: configuration.maximumWebhookAttempts
        ).handle)
    // Each holds up to its prefetch of retries (and of visual fallbacks, parked jobs and webhook events) until they are
    // due (see RetryForwarder), each batch settled when its own are forwarded, not after the batches taken before it.
    let forwarder = RetryForwarder(publisher: publisher, logger: logger)
    // Webhook events come back in the order they are due (an app's wait each just after the one before), across batches.
    let webhookForwarder = RetryForwarder(publisher: publisher, logger: logger, order: ForwardingOrder())
    let retryConsumers = (retryPolicy.queueNames + [QueueNames.pushVisualFallback, QueueNames.pushParked, WebhookDispatcher.retryQueue]).map { queue in
        (queue: queue, consumer: AMQPConsumer(
            configuration: amqp, queue: queue, topology: topology,
            // The webhook forwarder takes each batch's places in the order the batches were taken (startsInOrder).
            options: .init(prefetch: 2000, maximumBatch: 100, concurrentBatches: 4, startsInOrder: queue == WebhookDispatcher.retryQueue),
            deadLetterPublisher: publisher, logger: logger,
            deferringHandler: queue == WebhookDispatcher.retryQueue ? webhookForwarder.handle : forwarder.handle))
    }
    let consumers = pushConsumers + retryConsumers + [(queue: WebhookDelivery.queue, consumer: webhooks)]
    let databaseHealth = DatabaseHealth(client: database, logger: logger)
    let health = HealthServer(
        host: configuration.httpHost, port: configuration.healthPort,
        checks: [
            "amqp": { publisher.isConnected && consumers.allSatisfy { $0.consumer.isConnected } },
            "database": { await databaseHealth.check() },
        ],
        metrics: metrics, logger: logger)
    return ServiceParts(
        services: [database, ConnectionPoolService(httpClients: [connections, webhookConnections], apnsConnections: apnsConnections), publisher]
            + consumers.map(\.consumer) + [PushEndpointAudit(client: database, allowance: outboundPolicy.allowance, logger: logger), health],
        consumers: consumers, logger: logger)
}

/// Closes the provider connections after the consumers stopped using them.
struct ConnectionPoolService: Service {
    let httpClients: [OutboundHTTPClient]
    let apnsConnections: APNsTransport

    public func run() async throws {
        try? await gracefulShutdown()
        await apnsConnections.shutdown()
        for clients in httpClients { await clients.shutdown() }
    }
}
