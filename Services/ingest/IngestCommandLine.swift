import NotifyRuntime

/// `ingest --help` and the environment it reads.
@main
struct IngestCommandLine: ServiceCommand {
    static let adminToken = EnvironmentVariable("NOTIFY_ADMIN_TOKEN", "bearer token of the operator endpoints (/v1/apps)", required: true)
    static let httpPort = EnvironmentVariable("NOTIFY_HTTP_PORT", "port of the HTTP API", default: "8080")
    static let subscriptionLifetimeDays = EnvironmentVariable(
        "NOTIFY_SUBSCRIPTION_LIFETIME_DAYS", "days a device subscription lives before it must be renewed", default: "30")
    static let prefetch = EnvironmentVariable("NOTIFY_PREFETCH", "messages taken from the notify.ingest queue at once", default: "200")

    static let variables: [EnvironmentVariable] = [
        .amqpURL, .databaseURL(role: "read-only"), adminToken, .httpHost, httpPort, subscriptionLifetimeDays, prefetch, .logLevel,
    ]

    static let configuration = serviceConfiguration(
        name: "ingest",
        abstract: "The edge: HTTP API for operators, app servers and devices, and the consumer of the notify.ingest AMQP exchange.")

    static func runService(environment: ServiceEnvironment) async throws {
        try await IngestService(environment: environment).run()
    }
}
