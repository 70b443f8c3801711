import NotifyRuntime

/// `fanout --help` and the environment it reads.
@main
struct FanoutCommandLine: ServiceCommand {
    static let prefetch = EnvironmentVariable("NOTIFY_PREFETCH", "change-event messages held from the broker at once (half of them make a batch)", default: "100")

    static let deviceCacheUsers = EnvironmentVariable(
        "NOTIFY_DEVICE_CACHE_USERS", "users whose devices are kept between batches, in each of two generations (0: none)", default: "25000")

    static let variables: [EnvironmentVariable] = [
        .amqpURL, .databaseURL(role: "read-only"), prefetch, deviceCacheUsers, .httpHost, .healthPort(default: 8082), .logLevel,
    ]

    static let configuration = serviceConfiguration(
        name: "fanout",
        abstract: "Turns change events from fanout.changes into push jobs, one per target device, published in batches per provider.")

    static func runService(environment: ServiceEnvironment) async throws {
        try await FanoutService(environment: environment).run()
    }
}
