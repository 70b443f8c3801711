import AsyncHTTPClient
import NIOCore
import NIOSSL
import NotifyAMQP
import NotifyDatabase
import NotifyModels
import NotifyRuntime
import PostgresNIO
import ServiceLifecycle

/// Wires push-dispatch together: HTTP/2 client, credentials from the database, the APNs consumer, health.
struct PushDispatchService {
    let environment: ServiceEnvironment

    func run() async throws {
        let logger = ServiceRunner.bootstrapLogging(label: "push-dispatch", level: environment.string(.logLevel))
        let amqp = try environment.amqpConfiguration()
        let database = try DatabaseURL.makeClient(try environment.require(.databaseURL(role: "reader")), logger: logger)

        var tls = TLSConfiguration.makeClientConfiguration()
        if let caFile = environment.string(PushDispatchCommandLine.trustedCA) {
            tls.additionalTrustRoots = [.file(caFile)]
        }
        var httpConfiguration = HTTPClient.Configuration(tlsConfiguration: tls)
        httpConfiguration.httpVersion = .automatic
        httpConfiguration.timeout = .init(connect: .seconds(5), read: .seconds(30))
        let httpClient = HTTPClient(eventLoopGroupProvider: .singleton, configuration: httpConfiguration)

        let publisher = AMQPPublisher(configuration: amqp, topology: AMQPTopology(), logger: logger)
        let handler = APNsDispatchHandler(
            client: APNsClient(httpClient: httpClient, signer: APNsTokenSigner()),
            credentials: CredentialStore(client: database, logger: logger),
            concurrency: try environment.integer(PushDispatchCommandLine.concurrency),
            logger: logger)
        let queue = QueueNames.pushQueue(.apns)
        let prefetch = try environment.integer(PushDispatchCommandLine.prefetch)
        let consumer = AMQPConsumer(
            configuration: amqp, queue: queue, topology: .workQueue(queue),
            options: .init(prefetch: prefetch, maximumBatch: prefetch),
            deadLetterPublisher: publisher, logger: logger, handler: handler.handle)
        let databaseHealth = DatabaseHealth(client: database, logger: logger)
        let health = HealthServer(
            host: try environment.require(.httpHost), port: try environment.integer(.healthPort(default: 8083)),
            checks: ["amqp": { consumer.isConnected }, "database": { await databaseHealth.check() }],
            logger: logger)
        try await ServiceRunner.run([database, HTTPClientService(client: httpClient), publisher, consumer, health], logger: logger)
    }
}

/// Shuts the HTTP client down after the consumer stopped using it.
struct HTTPClientService: Service {
    let client: HTTPClient

    func run() async throws {
        try? await gracefulShutdown()
        try await client.shutdown()
    }
}
