import NotifyAMQP
import NotifyAPNs
import NotifyAPNsCore
import NotifyDatabase
import NotifyModels
import NotifyOutbound
import NotifyRuntime
import PostgresNIO
import ServiceLifecycle

/// Wires push-dispatch together: APNs connections and HTTP clients, credentials from the database, a consumer per provider
/// and lane, health.
public struct PushDispatchService {
    let environment: ServiceEnvironment

    static let trustedCA = EnvironmentVariable(
        "NOTIFY_TRUSTED_CA_FILE", "PEM file of an extra CA to trust for provider endpoints (the provider sandbox's ca.pem)")
    static let concurrency = EnvironmentVariable(
        "NOTIFY_CONCURRENCY", "pushes in flight at once per provider, shared by its lanes and its apps (APNs streams included)", default: "512")
    static let appConcurrency = EnvironmentVariable(
        "NOTIFY_APP_CONCURRENCY",
        "an app's share of a provider's pushes in flight while other apps wait; an app at its share whose answers take over 1 s has its further pushes parked",
        default: "128")
    static let prefetch = EnvironmentVariable(
        "NOTIFY_PREFETCH", "interactive push-job messages taken from the broker at once per provider (above the messages a slow app's share can hold)",
        default: "512")
    static let bulkPrefetch = EnvironmentVariable(
        "NOTIFY_BULK_PREFETCH", "broadcast push-job messages (up to 500 jobs each) taken from the broker at once per provider", default: "16")

    static let feedbackInterval = EnvironmentVariable(
        "NOTIFY_FEEDBACK_INTERVAL_MS", "how long outcomes gather before they go to push.feedback in one message (sooner when half the prefetch waits for them)",
        default: "200")

    static let retryDelays = EnvironmentVariable(
        "NOTIFY_RETRY_DELAYS_MS", "comma-separated delays (ms) before each retry of a transient failure; their count bounds the retries",
        default: "1000,5000,25000,125000,600000")

    static let webhookAttempts = EnvironmentVariable(
        "NOTIFY_WEBHOOK_MAX_ATTEMPTS", "attempts to POST a webhook event (0.5 s apart, then twice as long each time) before it is dead-lettered",
        default: "8")

    public static let variables: [EnvironmentVariable] = [
        .amqpURL, .databaseURL(role: "read-only: provider credentials and webhooks"), trustedCA, concurrency, prefetch, feedbackInterval,
        appConcurrency, bulkPrefetch, retryDelays, webhookAttempts, .outboundAllow, .secretKeys, .secretKeysFile, .httpHost, .healthPort(default: 8083), .logLevel, .logFormat,
    ]

    public init(environment: ServiceEnvironment) {
        self.environment = environment
    }

    public func run() async throws {
        let logger = ServiceRunner.bootstrapLogging(
            label: "push-dispatch", level: environment.string(.logLevel), format: environment.string(.logFormat))
        let metrics = ServiceMetrics.bootstrap()
        let amqp = try environment.amqpConfiguration()
        let database = try DatabaseURL.makeClient(try environment.require(.databaseURL(role: "reader")), logger: logger)
        let keyring = try environment.secretKeyring()

        let trustedCAFile = environment.string(Self.trustedCA)
        let outboundPolicy = try environment.outboundPolicy()
        // Every URL here is an app's or a device's (endpoints, channels, token endpoints, webhooks): checked by the policy.
        let connections = OutboundHTTPClient(policy: outboundPolicy, trustedCAFile: trustedCAFile, maximumDestinations: 1024)
        let webhookConnections = OutboundHTTPClient(policy: outboundPolicy, trustedCAFile: trustedCAFile, readTimeout: .seconds(10))
        let apnsConnections = try APNsTransport(trustedCAFile: trustedCAFile, policy: outboundPolicy)
        let retryPolicy = RetryPolicy(delaysMilliseconds: try Self.delays(environment))
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
        let concurrency = try environment.integer(Self.concurrency)
        let appConcurrency = try environment.integer(Self.appConcurrency)
        let prefetch = (interactive: try environment.integer(Self.prefetch), bulk: try environment.integer(Self.bulkPrefetch))
        let feedbackInterval = Duration.milliseconds(try environment.integer(Self.feedbackInterval))
        // Per provider, a consumer per lane sharing one in-flight budget (interactive first, an app's share each).
        // Each interactive message is a batch of its own: a batch is settled once all its jobs are answered or parked, so
        // a batch of several holding one slow app's job would hold the other messages of the prefetch with it (a slow
        // app then holds at most its share's worth of messages, well under the prefetch).
        let consumers = providers.flatMap { provider in
            let budget = InFlightBudget(capacity: concurrency, appShare: appConcurrency)
            let metrics = DispatchMetrics(provider: provider.platform)
            return PushLane.allCases.map { lane in
                let lanePrefetch = lane == .interactive ? prefetch.interactive : prefetch.bulk
                return AMQPConsumer(
                    configuration: amqp, queue: QueueNames.pushQueue(provider.platform, lane: lane), topology: topology,
                    options: .init(prefetch: lanePrefetch, maximumBatch: lane == .interactive ? 1 : max(lanePrefetch / 4, 1), concurrentBatches: 4),
                    deadLetterPublisher: publisher, logger: logger,
                    deferringHandler: PushDispatchHandler(
                        provider: provider, lane: lane, budget: budget, publisher: publisher,
                        reporter: OutcomeReporter(publisher: publisher, interval: feedbackInterval, maximumDeliveries: lanePrefetch / 2, logger: logger),
                        retryPolicy: retryPolicy, metrics: metrics, logger: logger,
                        syncCheck: DeviceSyncCheck(client: database, logger: logger)
                    ).handle)
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
                maximumAttempts: max(try environment.integer(Self.webhookAttempts), 1)
            ).handle)
        // Each holds up to its prefetch of retries (and of visual fallbacks, parked jobs and webhook events) until they are
        // due (see RetryForwarder), each batch settled when its own are forwarded, not after the batches taken before it.
        let forwarder = RetryForwarder(publisher: publisher, logger: logger)
        let retryConsumers = (retryPolicy.queueNames + [QueueNames.pushVisualFallback, QueueNames.pushParked, WebhookDispatcher.retryQueue]).map { queue in
            AMQPConsumer(
                configuration: amqp, queue: queue, topology: topology, options: .init(prefetch: 2000, maximumBatch: 100, concurrentBatches: 4),
                deadLetterPublisher: publisher, logger: logger, deferringHandler: forwarder.handle)
        }
        let databaseHealth = DatabaseHealth(client: database, logger: logger)
        let health = HealthServer(
            host: try environment.require(.httpHost), port: try environment.integer(.healthPort(default: 8083)),
            checks: [
                "amqp": { publisher.isConnected && (consumers + retryConsumers).allSatisfy(\.isConnected) && webhooks.isConnected },
                "database": { await databaseHealth.check() },
            ],
            metrics: metrics, logger: logger)
        try await ServiceRunner.run(
            [database, ConnectionPoolService(httpClients: [connections, webhookConnections], apnsConnections: apnsConnections), publisher] + consumers
                + retryConsumers + [webhooks, PushEndpointAudit(client: database, allowance: outboundPolicy.allowance, logger: logger), health],
            logger: logger)
    }
}

extension PushDispatchService {
    static func delays(_ environment: ServiceEnvironment) throws(ConfigurationError) -> [Int] {
        let text = try environment.require(Self.retryDelays)
        let delays = text.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard !delays.isEmpty, delays.count == text.split(separator: ",").count, delays.allSatisfy({ $0 > 0 }) else {
            throw ConfigurationError("NOTIFY_RETRY_DELAYS_MS must be positive integers separated by commas, got '\(text)'")
        }
        return delays
    }
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
