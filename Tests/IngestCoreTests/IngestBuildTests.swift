import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NotifyAMQP
import NotifyModels
import NotifyRuntime
import Testing

@testable import IngestCore

/// Ingest built whole from its configuration, in-process, as `ingest` builds it: building connects to nothing, so
/// neither a broker nor a database is needed; its router answers in-process what needs neither.
@Suite struct IngestBuildTests {
    private static let keys = SecretKeyring.generateEntry(id: "ingest-build")
    private static let databaseURL = "postgres://notify_reader:reader-pw@db.internal:5433/notify"
    private static let adminToken = "operator-token-9d1e"

    /// The configuration `ingest` reads from an environment holding the required variables and `variables`.
    private static func configuration(_ variables: [String: String] = [:]) throws -> IngestConfiguration {
        let environment = ["NOTIFY_DATABASE_URL": databaseURL, "NOTIFY_SECRET_KEYS": keys, "NOTIFY_ADMIN_TOKEN": adminToken].merging(variables) { $1 }
        return try IngestConfiguration(environment: ServiceEnvironment(IngestConfiguration.variables, environment: environment))
    }

    private static func build(_ configuration: IngestConfiguration) throws -> some ApplicationProtocol {
        try buildIngest(configuration: configuration, logger: Logger(label: "ingest-build-tests"), metrics: ServiceMetrics())
    }

    /// Each setting's name and value, to compare two configurations whole.
    private static func settings(_ configuration: IngestConfiguration) -> [String: String] {
        Dictionary(uniqueKeysWithValues: Mirror(reflecting: configuration).children.map { ($0.label ?? "?", String(reflecting: $0.value)) })
    }

    @Test("unset variables take the defaults ingest --help lists, which are those of a configuration made in code")
    func defaults() throws {
        let read = try Self.configuration()
        let made = IngestConfiguration(databaseURL: Self.databaseURL, adminToken: Self.adminToken, secretKeys: try SecretKeyring(parsing: Self.keys))
        #expect(Self.settings(read) == Self.settings(made))
        #expect((read.httpHost, read.httpPort, read.prefetch, read.maximumConnections, read.maximumStreamsPerUser) == ("127.0.0.1", 8080, 200, 4_096, 10))
        #expect((read.confirmTimeout, read.storageLag, read.liveUnbindAfter) == (.milliseconds(5_000), .milliseconds(25), .seconds(30)))
        #expect((read.subscriptionLifetime, read.brokerUserOverlap, read.keyRotationOverlap) == (30 * 86_400, 86_400, 86_400))
        #expect((read.maximumQueueDepth, read.defaultRateLimit, read.replicaDatabaseURL) == (100_000, RateLimit(), nil))
        #expect((read.publicBrokerHost, read.publicBrokerPort) == ("127.0.0.1", 5672))
        #expect((read.logging.level, read.logging.format) == (.info, .text))
        #expect(!read.isGivenBrokerAdministration)
    }

    @Test("each variable reaches its setting")
    func values() throws {
        let read = try Self.configuration([
            "NOTIFY_AMQP_URL": "amqp://notify:amqp-pw@rabbit-1:5673/notify", "NOTIFY_REPLICA_DATABASE_URL": "postgres://r:pw@standby:5432/notify",
            "NOTIFY_HTTP_HOST": "0.0.0.0", "NOTIFY_HTTP_PORT": "9080", "NOTIFY_SUBSCRIPTION_LIFETIME_DAYS": "7", "NOTIFY_PREFETCH": "50",
            "NOTIFY_CONFIRM_TIMEOUT_MS": "0", "NOTIFY_APP_REQUESTS_PER_SECOND": "100", "NOTIFY_APP_NOTIFICATIONS_PER_SECOND": "0",
            "NOTIFY_MAX_QUEUE_DEPTH": "-1", "NOTIFY_STORAGE_LAG_MS": "0", "NOTIFY_MAX_STREAMS_PER_USER": "2", "NOTIFY_MAX_CONNECTIONS": "64",
            "NOTIFY_LIVE_UNBIND_SECONDS": "0", "NOTIFY_BROKER_USER_OVERLAP_SECONDS": "60", "NOTIFY_KEY_ROTATION_OVERLAP_SECONDS": "120",
            "LOG_LEVEL": "error", "LOG_FORMAT": "json", "NOTIFY_RABBITMQ_MANAGEMENT_URL": "http://notify:admin-pw@rabbit-1:15672",
        ])
        #expect(read.amqp.description == "amqp://notify@rabbit-1:5673/notify")
        #expect(read.replicaDatabaseURL == "postgres://r:pw@standby:5432/notify")
        #expect((read.httpHost, read.httpPort, read.prefetch, read.maximumConnections, read.maximumStreamsPerUser) == ("0.0.0.0", 9080, 50, 64, 2))
        // A confirm timeout under a millisecond is a millisecond; a negative depth limit is none.
        #expect((read.confirmTimeout, read.storageLag, read.liveUnbindAfter) == (.milliseconds(1), .zero, .zero))
        #expect((read.subscriptionLifetime, read.brokerUserOverlap, read.keyRotationOverlap) == (7 * 86_400, 60, 120))
        #expect((read.maximumQueueDepth, read.defaultRateLimit) == (0, RateLimit(requestsPerSecond: 100)))
        // App servers are told the broker NOTIFY_AMQP_URL names unless NOTIFY_PUBLIC_AMQP_ADDRESS says otherwise.
        #expect((read.publicBrokerHost, read.publicBrokerPort) == ("rabbit-1", 5673))
        let published = try Self.configuration(["NOTIFY_PUBLIC_AMQP_ADDRESS": "broker.example.com:5671"])
        #expect((published.publicBrokerHost, published.publicBrokerPort) == ("broker.example.com", 5671))
        #expect((read.logging.level, read.logging.format) == (.error, .json))
        // The management URL ingest is given is noticed (it warns at start-up), and not kept.
        #expect(read.isGivenBrokerAdministration)
        #expect(!Self.settings(read).values.contains { $0.contains("admin-pw") })
    }

    @Test("a bad value is refused with a message naming its variable", arguments: [
        ("NOTIFY_HTTP_PORT", "http", "NOTIFY_HTTP_PORT must be an integer, got 'http'"),
        ("NOTIFY_PUBLIC_AMQP_ADDRESS", "broker.example.com", "NOTIFY_PUBLIC_AMQP_ADDRESS: expected host:port"),
        ("NOTIFY_MAX_QUEUE_DEPTH", "1e5", "NOTIFY_MAX_QUEUE_DEPTH must be an integer, got '1e5'"),
        ("NOTIFY_OUTBOUND_ALLOW", "::::", "NOTIFY_OUTBOUND_ALLOW: '::::': the port is 1 to 65535 or *"),
        ("LOG_FORMAT", "xml", "LOG_FORMAT must be text or json, got 'xml'"),
        ("LOG_LEVEL", "verbose", "LOG_LEVEL must be trace, debug, info, notice, warning, error or critical, got 'verbose'"),
        ("NOTIFY_DATABASE_URL", "postgres://notify_reader:reader-pw@/notify", "NOTIFY_DATABASE_URL: expected a postgres://user:password@host:port/database URL (it names no host)"),
        ("NOTIFY_REPLICA_DATABASE_URL", "standby:5432", "NOTIFY_REPLICA_DATABASE_URL: expected a postgres://user:password@host:port/database URL (its scheme is not postgres or postgresql)"),
    ])
    func badValue(variable: String, value: String, message: String) {
        let error = #expect(throws: ConfigurationError.self) { try Self.configuration([variable: value]) }
        #expect(error?.description == message)
    }

    @Test("without NOTIFY_ADMIN_TOKEN and NOTIFY_DATABASE_URL, ingest does not start and names both")
    func missingVariables() {
        let error = #expect(throws: ConfigurationError.self) {
            try ServiceEnvironment(IngestConfiguration.variables, environment: ["NOTIFY_SECRET_KEYS": Self.keys])
        }
        #expect(error?.description.contains("  NOTIFY_DATABASE_URL: ") == true)
        #expect(error?.description.contains("  NOTIFY_ADMIN_TOKEN: ") == true)
    }

    @Test("built: the server on NOTIFY_HTTP_HOST and NOTIFY_HTTP_PORT, the pools, the publisher, the ingest and live consumers, the watches, polling and the backlog monitor")
    func built() throws {
        let application = try Self.build(try Self.configuration(["NOTIFY_HTTP_HOST": "0.0.0.0", "NOTIFY_HTTP_PORT": "9080"]))
        #expect(application.configuration.address == .hostname("0.0.0.0", port: 9080))
        #expect(application.configuration.serverName == "notify-ingest")
        #expect(application.services.map { "\(type(of: $0))" } == [
            "PostgresClient", "AMQPPublisher", "AMQPConsumer", "AMQPConsumer", "AMQPQueueBindings", "AppliedCommandWatch", "AppChangeWatch",
            "LiveHub", "PollIngestion", "APIKeyUseReporter", "HTTPIdentityDocumentFetcher", "AMQPQueueDepths", "IngestInstanceCount",
            "BacklogMonitor",
        ])
    }

    @Test("built with a standby and no queue depth limit: a second pool, and no backlog monitor")
    func builtWithReplicaAndNoDepthLimit() throws {
        let application = try Self.build(try Self.configuration([
            "NOTIFY_REPLICA_DATABASE_URL": "postgres://r:pw@standby:5432/notify", "NOTIFY_MAX_QUEUE_DEPTH": "0",
        ]))
        let services = application.services.map { "\(type(of: $0))" }
        #expect(services.prefix(3) == ["PostgresClient", "PostgresClient", "AMQPPublisher"])
        #expect(!services.contains("BacklogMonitor"))
    }

    @Test("the built router answers /metrics, /openapi.yaml, and the operator's routes with NOTIFY_ADMIN_TOKEN only")
    func builtRouter() async throws {
        let built = try Self.build(try Self.configuration())
        // The router alone, without the services (which would connect).
        let application = Application(responder: try await built.responder, logger: Logger(label: "ingest-build-tests"))
        try await application.test(.router) { client in
            let metrics = try await client.execute(uri: "/metrics", method: .get)
            #expect(metrics.status == .ok)
            #expect(metrics.headers[.contentType]?.hasPrefix("text/plain") == true)
            let description = try await client.execute(uri: "/openapi.yaml", method: .get)
            #expect(description.status == .ok)
            #expect(String(buffer: description.body).hasPrefix("openapi: 3.1"))
            let body = ByteBuffer(string: #"{"name":"x","brokerUser":"legacy"}"#)
            let refused = try await client.execute(uri: "/v1/apps", method: .post, headers: [.authorization: "Bearer operator-secret"], body: body)
            #expect(refused.status == .unauthorized)
            // The configured token passes; the body is then checked (before anything is stored).
            let checked = try await client.execute(uri: "/v1/apps", method: .post, headers: [.authorization: "Bearer \(Self.adminToken)"], body: body)
            #expect(checked.status == .badRequest)
            #expect(try ErrorBody(checked).error.field == "brokerUser")
        }
    }
}
