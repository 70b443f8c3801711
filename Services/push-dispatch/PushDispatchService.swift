import NotifyAMQP
import NotifyDatabase
import NotifyModels
import NotifyRuntime
import PostgresNIO
import ServiceLifecycle

/// Wires push-dispatch together: APNs connections and HTTP clients, credentials from the database, a consumer per provider, health.
struct PushDispatchService {
    let environment: ServiceEnvironment

    func run() async throws {
        let logger = ServiceRunner.bootstrapLogging(label: "push-dispatch", level: environment.string(.logLevel))
        let metrics = ServiceMetrics.bootstrap()
        let amqp = try environment.amqpConfiguration()
        let database = try DatabaseURL.makeClient(try environment.require(.databaseURL(role: "reader")), logger: logger)

        let trustedCAFile = environment.string(PushDispatchCommandLine.trustedCA)
        let connections = HTTPClientPool(trustedCAFile: trustedCAFile)
        let apnsConnections = try APNsTransport(trustedCAFile: trustedCAFile)
        let retryPolicy = RetryPolicy(delaysMilliseconds: try Self.delays(environment))
        let providers: [any PushProvider] = [
            APNsProvider(
                client: APNsClient(connections: apnsConnections, signer: APNsTokenSigner()),
                credentials: CredentialStore(platform: .apns, client: database, logger: logger)),
            FCMProvider(
                client: FCMClient(http: connections.client(for: "fcm"), tokens: AccessTokenCache()),
                credentials: CredentialStore(platform: .fcm, client: database, logger: logger)),
            WebPushProvider(
                client: WebPushClient(http: connections.client(for: "webpush"), vapid: VAPIDSigner()),
                credentials: CredentialStore(platform: .webpush, client: database, logger: logger)),
            WNSProvider(
                client: WNSClient(http: connections.client(for: "wns"), tokens: AccessTokenCache()),
                credentials: CredentialStore(platform: .wns, client: database, logger: logger)),
        ]
        let topology = providers.reduce(AMQPTopology.workQueue(QueueNames.pushFeedback)) { topology, provider in
            topology.merging(.workQueue(QueueNames.pushQueue(provider.platform))).merging(retryPolicy.topology(provider.platform))
        }
        let publisher = AMQPPublisher(configuration: amqp, topology: topology, logger: logger)
        let concurrency = try environment.integer(PushDispatchCommandLine.concurrency)
        let prefetch = try environment.integer(PushDispatchCommandLine.prefetch)
        let feedbackInterval = Duration.milliseconds(try environment.integer(PushDispatchCommandLine.feedbackInterval))
        let consumers = providers.map { provider in
            AMQPConsumer(
                configuration: amqp, queue: QueueNames.pushQueue(provider.platform), topology: topology,
                options: .init(prefetch: prefetch, maximumBatch: max(prefetch / 4, 1), concurrentBatches: 4),
                deadLetterPublisher: publisher, logger: logger,
                deferringHandler: PushDispatchHandler(
                    provider: provider, publisher: publisher,
                    reporter: OutcomeReporter(publisher: publisher, interval: feedbackInterval, maximumDeliveries: prefetch / 2, logger: logger),
                    retryPolicy: retryPolicy, concurrency: concurrency,
                    metrics: DispatchMetrics(provider: provider.platform), logger: logger
                ).handle)
        }
        let databaseHealth = DatabaseHealth(client: database, logger: logger)
        let health = HealthServer(
            host: try environment.require(.httpHost), port: try environment.integer(.healthPort(default: 8083)),
            checks: ["amqp": { publisher.isConnected && consumers.allSatisfy(\.isConnected) }, "database": { await databaseHealth.check() }],
            metrics: metrics, logger: logger)
        try await ServiceRunner.run([database, ConnectionPoolService(httpClients: connections, apnsConnections: apnsConnections), publisher] + consumers + [health], logger: logger)
    }
}

extension PushDispatchService {
    static func delays(_ environment: ServiceEnvironment) throws(ConfigurationError) -> [Int] {
        let text = try environment.require(PushDispatchCommandLine.retryDelays)
        let delays = text.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard !delays.isEmpty, delays.count == text.split(separator: ",").count, delays.allSatisfy({ $0 > 0 }) else {
            throw ConfigurationError("NOTIFY_RETRY_DELAYS_MS must be positive integers separated by commas, got '\(text)'")
        }
        return delays
    }
}

/// Closes the provider connections after the consumers stopped using them.
struct ConnectionPoolService: Service {
    let httpClients: HTTPClientPool
    let apnsConnections: APNsTransport

    func run() async throws {
        try? await gracefulShutdown()
        await apnsConnections.shutdown()
        await httpClients.shutdown()
    }
}
