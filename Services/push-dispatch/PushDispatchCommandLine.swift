import NotifyRuntime

/// `push-dispatch --help` and the environment it reads.
@main
struct PushDispatchCommandLine: ServiceCommand {
    static let trustedCA = EnvironmentVariable(
        "NOTIFY_TRUSTED_CA_FILE", "PEM file of an extra CA to trust for provider endpoints (the provider sandbox's ca.pem)")
    static let concurrency = EnvironmentVariable(
        "NOTIFY_CONCURRENCY", "FCM, WNS and Web Push pushes in flight at once per batch (APNs: as many as its HTTP/2 streams allow)", default: "256")
    static let prefetch = EnvironmentVariable(
        "NOTIFY_PREFETCH", "push-job messages (up to 500 jobs each) taken from the broker at once, in 4 concurrent batches", default: "16")

    static let feedbackInterval = EnvironmentVariable(
        "NOTIFY_FEEDBACK_INTERVAL_MS", "how long outcomes gather before they go to push.feedback in one message (sooner when half the prefetch waits for them)",
        default: "200")

    static let retryDelays = EnvironmentVariable(
        "NOTIFY_RETRY_DELAYS_MS", "comma-separated delays (ms) before each retry of a transient failure; their count bounds the retries",
        default: "1000,5000,25000,125000,600000")

    static let variables: [EnvironmentVariable] = [
        .amqpURL, .databaseURL(role: "read-only: provider credentials"), trustedCA, concurrency, prefetch, feedbackInterval, retryDelays,
        .httpHost, .healthPort(default: 8083), .logLevel,
    ]

    static let configuration = serviceConfiguration(
        name: "push-dispatch",
        abstract: "Sends push jobs to APNs, FCM, WNS and Web Push, retries through delay queues, dead-letters what cannot succeed, and reports every outcome on push.feedback.")

    static func runService(environment: ServiceEnvironment) async throws {
        try await PushDispatchService(environment: environment).run()
    }
}
