import NotifyRuntime

/// `fanout --help` and the environment it reads.
@main
struct FanoutCommandLine: ServiceCommand {
    static let prefetch = EnvironmentVariable("NOTIFY_PREFETCH", "change-event messages taken from the broker at once", default: "50")

    static let variables: [EnvironmentVariable] = [
        .amqpURL, .databaseURL(role: "read-only"), prefetch, .httpHost, .healthPort(default: 8082), .logLevel,
    ]

    static let configuration = serviceConfiguration(
        name: "fanout",
        abstract: "Turns change events from fanout.changes into push jobs, one per target device, published in batches per provider.")

    static func runService(environment: ServiceEnvironment) async throws {
        try await FanoutService(environment: environment).run()
    }
}
