import Foundation
import Logging
import NotifyAMQP
import NotifyModels
import NotifyRuntime
import Testing

@testable import FanoutCore

/// Fanout built whole from its configuration, in-process, as `fanout` builds it: building connects to nothing, so
/// neither a broker nor a database is needed.
@Suite struct FanoutBuildTests {
    private static let databaseURL = "postgres://notify_reader:reader-pw@db.internal:5433/notify"

    /// The configuration `fanout` reads from an environment holding the required variable and `variables`.
    private static func configuration(_ variables: [String: String] = [:]) throws -> FanoutConfiguration {
        let environment = ["NOTIFY_DATABASE_URL": databaseURL].merging(variables) { $1 }
        return try FanoutConfiguration(environment: ServiceEnvironment(FanoutConfiguration.variables, environment: environment))
    }

    /// Each setting's name and value, to compare two configurations whole.
    private static func settings(_ configuration: FanoutConfiguration) -> [String: String] {
        Dictionary(uniqueKeysWithValues: Mirror(reflecting: configuration).children.map { ($0.label ?? "?", String(reflecting: $0.value)) })
    }

    @Test("unset variables take the defaults fanout --help lists, which are those of a configuration made in code")
    func defaults() throws {
        let read = try Self.configuration()
        #expect(Self.settings(read) == Self.settings(FanoutConfiguration(databaseURL: Self.databaseURL)))
        #expect((read.prefetch, read.deviceCacheUsers, read.visualFallbackDelay) == (100, 25_000, 30))
        #expect((read.httpHost, read.healthPort) == ("127.0.0.1", 8082))
        #expect((read.logging.level, read.logging.format) == (.info, .text))
        #expect(read.amqp.description == "amqp://guest@127.0.0.1:5672//")
    }

    @Test("each variable reaches its setting")
    func values() throws {
        let read = try Self.configuration([
            "NOTIFY_AMQP_URL": "amqp://notify:amqp-pw@rabbit-1:5672/notify,amqp://notify:amqp-pw@rabbit-2:5672/notify", "NOTIFY_PREFETCH": "40",
            "NOTIFY_DEVICE_CACHE_USERS": "0", "NOTIFY_VISUAL_FALLBACK_SECONDS": "-5", "NOTIFY_HTTP_HOST": "0.0.0.0", "NOTIFY_HEALTH_PORT": "9082",
            "LOG_LEVEL": "warning", "LOG_FORMAT": "json",
        ])
        #expect(read.amqp.endpoints.map(\.description) == ["rabbit-1:5672", "rabbit-2:5672"])
        #expect(read.databaseURL == Self.databaseURL)
        // A negative fallback delay is no delay: the alert at once.
        #expect((read.prefetch, read.deviceCacheUsers, read.visualFallbackDelay) == (40, 0, 0))
        #expect((read.httpHost, read.healthPort) == ("0.0.0.0", 9082))
        #expect((read.logging.level, read.logging.format) == (.warning, .json))
    }

    @Test("a bad value is refused with a message naming its variable", arguments: [
        ("NOTIFY_PREFETCH", "lots", "NOTIFY_PREFETCH must be an integer, got 'lots'"),
        ("NOTIFY_DEVICE_CACHE_USERS", "many", "NOTIFY_DEVICE_CACHE_USERS must be an integer, got 'many'"),
        ("NOTIFY_VISUAL_FALLBACK_SECONDS", "30s", "NOTIFY_VISUAL_FALLBACK_SECONDS must be an integer, got '30s'"),
        ("NOTIFY_HEALTH_PORT", "x", "NOTIFY_HEALTH_PORT must be an integer, got 'x'"),
        ("NOTIFY_AMQP_URL", "http://rabbit", "NOTIFY_AMQP_URL: expected an amqp://user:password@host:port/vhost URL, or several separated by commas"),
        ("NOTIFY_DATABASE_URL", "mysql://notify:db-secret@db:3306/notify", "NOTIFY_DATABASE_URL: expected a postgres://user:password@host:port/database URL (its scheme is not postgres or postgresql)"),
    ])
    func badValue(variable: String, value: String, message: String) {
        let error = #expect(throws: ConfigurationError.self) { try Self.configuration([variable: value]) }
        #expect(error?.description == message)
    }

    @Test("built: the pool and the publisher first, the consumers of fanout.changes and fanout.broadcasts, health last")
    func built() throws {
        let parts = try buildFanout(configuration: try Self.configuration(), logger: Logger(label: "fanout-build-tests"), metrics: ServiceMetrics())
        #expect(parts.services.map { "\(type(of: $0))" } == ["PostgresClient", "AMQPPublisher", "AMQPConsumer", "AMQPConsumer", "HealthServer"])
        #expect(parts.consumers.map(\.queue) == [QueueNames.fanoutChanges, QueueNames.fanoutBroadcasts])
        #expect(parts.services.compactMap { ($0 as? AMQPConsumer).map(ObjectIdentifier.init) } == parts.consumers.map { ObjectIdentifier($0.consumer) })
    }
}
