import Foundation
import Logging
import NotifyAMQP
import NotifyModels
import NotifyRuntime
import Testing

@testable import PushDispatchCore

/// Push-dispatch built whole from its configuration, in-process, as `push-dispatch` builds it: building connects to
/// nothing (provider connections are opened on first use), so neither a broker, a database nor a provider is needed.
@Suite struct PushDispatchBuildTests {
    private static let keys = SecretKeyring.generateEntry(id: "push-dispatch-build")
    private static let databaseURL = "postgres://notify_reader:reader-pw@db.internal:5433/notify"

    /// The configuration `push-dispatch` reads from an environment holding the required variables and `variables`.
    private static func configuration(_ variables: [String: String] = [:]) throws -> PushDispatchConfiguration {
        let environment = ["NOTIFY_DATABASE_URL": databaseURL, "NOTIFY_SECRET_KEYS": keys].merging(variables) { $1 }
        return try PushDispatchConfiguration(environment: ServiceEnvironment(PushDispatchConfiguration.variables, environment: environment))
    }

    private static func build(_ configuration: PushDispatchConfiguration) throws -> ServiceParts {
        try buildPushDispatch(configuration: configuration, logger: Logger(label: "push-dispatch-build-tests"), metrics: ServiceMetrics())
    }

    /// Each setting's name and value, to compare two configurations whole.
    private static func settings(_ configuration: PushDispatchConfiguration) -> [String: String] {
        Dictionary(uniqueKeysWithValues: Mirror(reflecting: configuration).children.map { ($0.label ?? "?", String(reflecting: $0.value)) })
    }

    /// The queues of the providers' lanes, in the order the consumers are built.
    private static let pushQueues = [
        "push.apns", "push.apns.bulk", "push.fcm", "push.fcm.bulk", "push.webpush", "push.webpush.bulk", "push.wns", "push.wns.bulk",
    ]

    @Test("unset variables take the defaults push-dispatch --help lists, which are those of a configuration made in code")
    func defaults() throws {
        let read = try Self.configuration()
        let made = PushDispatchConfiguration(databaseURL: Self.databaseURL, secretKeys: try SecretKeyring(parsing: Self.keys))
        #expect(Self.settings(read) == Self.settings(made))
        #expect((read.concurrency, read.appConcurrency, read.prefetch, read.bulkPrefetch) == (2048, 128, 512, 16))
        #expect((read.feedbackInterval, read.maximumWebhookAttempts, read.trustedCAFile) == (.milliseconds(200), 8, nil))
        #expect(read.retryDelaysMilliseconds == [1_000, 5_000, 25_000, 125_000, 600_000])
        #expect(read.outboundPolicy.allowance.plainHTTPHosts.isEmpty)
        #expect((read.httpHost, read.healthPort, read.logging.level, read.logging.format) == ("127.0.0.1", 8083, .info, .text))
    }

    @Test("each variable reaches its setting")
    func values() throws {
        let read = try Self.configuration([
            "NOTIFY_CONCURRENCY": "64", "NOTIFY_APP_CONCURRENCY": "8", "NOTIFY_PREFETCH": "128", "NOTIFY_BULK_PREFETCH": "4",
            "NOTIFY_FEEDBACK_INTERVAL_MS": "50", "NOTIFY_RETRY_DELAYS_MS": "100, 2000", "NOTIFY_WEBHOOK_MAX_ATTEMPTS": "0",
            "NOTIFY_TRUSTED_CA_FILE": "/etc/notify/ca.pem", "NOTIFY_OUTBOUND_ALLOW": "localhost:21444", "NOTIFY_HEALTH_PORT": "9083",
            "LOG_LEVEL": "trace",
        ])
        #expect((read.concurrency, read.appConcurrency, read.prefetch, read.bulkPrefetch) == (64, 8, 128, 4))
        // Fewer than one webhook attempt is one.
        #expect((read.feedbackInterval, read.maximumWebhookAttempts, read.trustedCAFile) == (.milliseconds(50), 1, "/etc/notify/ca.pem"))
        #expect(read.retryDelaysMilliseconds == [100, 2_000])
        #expect(read.outboundPolicy.allowance.plainHTTPHosts == ["localhost:21444"])
        #expect((read.healthPort, read.logging.level) == (9083, .trace))
    }

    @Test("a bad value is refused with a message naming its variable", arguments: [
        ("NOTIFY_RETRY_DELAYS_MS", "1000,soon", "NOTIFY_RETRY_DELAYS_MS must be positive integers separated by commas, got '1000,soon'"),
        ("NOTIFY_RETRY_DELAYS_MS", "1000,0", "NOTIFY_RETRY_DELAYS_MS must be positive integers separated by commas, got '1000,0'"),
        ("NOTIFY_CONCURRENCY", "unbounded", "NOTIFY_CONCURRENCY must be an integer, got 'unbounded'"),
        ("NOTIFY_FEEDBACK_INTERVAL_MS", "0.2", "NOTIFY_FEEDBACK_INTERVAL_MS must be an integer, got '0.2'"),
        ("NOTIFY_WEBHOOK_MAX_ATTEMPTS", "x", "NOTIFY_WEBHOOK_MAX_ATTEMPTS must be an integer, got 'x'"),
        ("NOTIFY_OUTBOUND_ALLOW", "::::", "NOTIFY_OUTBOUND_ALLOW: '::::': the port is 1 to 65535 or *"),
        ("NOTIFY_SECRET_KEYS", "no-key", "NOTIFY_SECRET_KEYS: each key is id:base64 (an entry has no ':')"),
        ("NOTIFY_DATABASE_URL", "mysql://notify:db-secret@db:3306/notify", "NOTIFY_DATABASE_URL: expected a postgres://user:password@host:port/database URL (its scheme is not postgres or postgresql)"),
    ])
    func badValue(variable: String, value: String, message: String) {
        let error = #expect(throws: ConfigurationError.self) { try Self.configuration([variable: value]) }
        #expect(error?.description == message)
    }

    @Test("built: the pool, the connections and the publisher first; a consumer per provider and lane, per retry delay, for the fallbacks, parked jobs and webhooks; health last")
    func built() throws {
        let parts = try Self.build(try Self.configuration())
        #expect(parts.consumers.map(\.queue) == Self.pushQueues + [
            "push.retry.1000ms", "push.retry.5000ms", "push.retry.25000ms", "push.retry.125000ms", "push.retry.600000ms",
            QueueNames.pushVisualFallback, QueueNames.pushParked, "webhooks.retry", WebhookDelivery.queue,
        ])
        #expect(parts.services.map { "\(type(of: $0))" } == ["PostgresClient", "ConnectionPoolService", "AMQPPublisher"]
            + Array(repeating: "AMQPConsumer", count: parts.consumers.count) + ["PushEndpointAudit", "HealthServer"])
        #expect(parts.services.compactMap { ($0 as? AMQPConsumer).map(ObjectIdentifier.init) } == parts.consumers.map { ObjectIdentifier($0.consumer) })
    }

    @Test("NOTIFY_RETRY_DELAYS_MS names the retry queues consumed")
    func retryQueues() throws {
        let parts = try Self.build(try Self.configuration(["NOTIFY_RETRY_DELAYS_MS": "250,4000"]))
        #expect(parts.consumers.map(\.queue).filter { $0.hasPrefix("push.retry.") } == ["push.retry.250ms", "push.retry.4000ms"])
    }
}
