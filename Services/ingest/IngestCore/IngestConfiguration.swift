import Foundation
import NotifyAMQP
import NotifyRuntime

/// What ingest is told at start-up; `variables` are the environment it reads (and `ingest --help` lists).
public struct IngestConfiguration: Sendable {
    public var amqp: AMQPConfiguration
    public var databaseURL: String
    public var adminToken: String
    public var httpHost: String
    public var httpPort: Int
    /// How long a device subscription lives before it must be renewed.
    public var subscriptionLifetime: TimeInterval
    /// Messages taken from the `notify.ingest` queue at once.
    public var prefetch: Int
    public var logLevel: String

    static let adminToken = EnvironmentVariable("NOTIFY_ADMIN_TOKEN", "bearer token of the operator endpoints (/v1/apps)", required: true)
    static let httpPort = EnvironmentVariable("NOTIFY_HTTP_PORT", "port of the HTTP API", default: "8080")
    static let subscriptionLifetimeDays = EnvironmentVariable(
        "NOTIFY_SUBSCRIPTION_LIFETIME_DAYS", "days a device subscription lives before it must be renewed", default: "30")
    static let prefetch = EnvironmentVariable("NOTIFY_PREFETCH", "messages taken from the notify.ingest queue at once", default: "200")

    public static let variables: [EnvironmentVariable] = [
        .amqpURL, .databaseURL(role: "read-only"), adminToken, .httpHost, httpPort, subscriptionLifetimeDays, prefetch, .logLevel,
    ]

    public init(environment: ServiceEnvironment) throws(ConfigurationError) {
        amqp = try environment.amqpConfiguration()
        databaseURL = try environment.require(.databaseURL(role: "read-only"))
        adminToken = try environment.require(Self.adminToken)
        httpHost = try environment.require(.httpHost)
        httpPort = try environment.integer(Self.httpPort)
        subscriptionLifetime = Double(try environment.integer(Self.subscriptionLifetimeDays)) * 86400
        prefetch = try environment.integer(Self.prefetch)
        logLevel = try environment.require(.logLevel)
    }
}
