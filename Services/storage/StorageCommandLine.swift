import NotifyRuntime

/// `storage --help` and the environment it reads.
@main
struct StorageCommandLine: ServiceCommand {
    static let readerRole = EnvironmentVariable(
        "NOTIFY_DATABASE_READER_ROLE", "role granted SELECT on every table (ingest and fanout read through it)", default: "notify_reader")
    static let prefetch = EnvironmentVariable(
        "NOTIFY_PREFETCH", "messages taken from the broker at once, each carrying up to 500 commands (applied in transactions of up to 2,000)",
        default: "64")

    static let expirySweep = EnvironmentVariable(
        "NOTIFY_EXPIRY_SWEEP_SECONDS", "how often expired notifications are turned into expiry changes", default: "5")
    static let tombstoneRetention = EnvironmentVariable(
        "NOTIFY_TOMBSTONE_RETENTION_DAYS",
        "how long deletions, expirations and the change log are kept for offline devices to sync; an older cursor must resync", default: "30")

    static let variables: [EnvironmentVariable] = [
        .amqpURL, .databaseURL(role: "the writer: storage is the only service that writes"), readerRole, prefetch, expirySweep, tombstoneRetention,
        .httpHost, .healthPort(default: 8081), .logLevel,
    ]

    static let configuration = serviceConfiguration(
        name: "storage",
        abstract: "The only PostgreSQL writer: applies commands from storage.commands in batched transactions and emits change events to fanout.changes.")

    static func runService(environment: ServiceEnvironment) async throws {
        try await StorageService(environment: environment).run()
    }
}
