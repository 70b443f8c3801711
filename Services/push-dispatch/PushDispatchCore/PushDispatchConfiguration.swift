import Foundation
import NotifyAMQP
import NotifyModels
import NotifyOutbound
import NotifyRuntime

/// What push-dispatch is told at start-up; `variables` are the environment it reads (and `push-dispatch --help` lists).
public struct PushDispatchConfiguration: ServiceConfiguration {
    public var amqp: AMQPConfiguration
    /// The database, through the read-only role: provider credentials and webhooks.
    public var databaseURL: String
    /// A PEM file of an extra CA to trust for provider endpoints (the provider sandbox's `ca.pem`).
    public var trustedCAFile: String?
    /// Pushes in flight at once per provider, shared by its lanes and its apps. 2048, not 512: with 512 (384 for an app
    /// alone) APNs' connections were written a few streams at a time, and push-dispatch took 64-83 µs of CPU per
    /// notification in the sustained benchmark (0.4-0.5 wake-ups) against 60-65 µs (0.2-0.3) with 2048
    /// (docs/benchmarks-history.md, "2026-11-27, 01e961d").
    public var concurrency = 2048
    /// An app's share of a provider's pushes in flight while other apps wait.
    public var appConcurrency = 128
    /// Interactive push-job messages taken from the broker at once per provider.
    public var prefetch = 512
    /// Broadcast push-job messages (up to 500 jobs each) taken from the broker at once per provider.
    public var bulkPrefetch = 16
    /// How long outcomes gather before they go to `push.feedback` in one message.
    public var feedbackInterval: Duration = .milliseconds(200)
    /// The delays before each retry of a transient failure; their count bounds the retries.
    public var retryDelaysMilliseconds = [1_000, 5_000, 25_000, 125_000, 600_000]
    /// Attempts to POST a webhook event before it is dead-lettered.
    public var maximumWebhookAttempts = 8
    /// Which addresses beyond the public internet the service may call (endpoints, channels, token endpoints, webhooks).
    public var outboundPolicy = OutboundPolicy()
    /// Opens the provider credentials and webhook secrets stored for apps.
    public var secretKeys: SecretKeyring
    /// The address `/health` and `/metrics` listen on.
    public var httpHost = "127.0.0.1"
    public var healthPort = 8083
    public var logging = LogSettings()

    static let databaseURL = EnvironmentVariable.databaseURL(role: "read-only: provider credentials and webhooks")
    static let trustedCA = EnvironmentVariable(
        "NOTIFY_TRUSTED_CA_FILE", "PEM file of an extra CA to trust for provider endpoints (the provider sandbox's ca.pem)")
    static let concurrency = EnvironmentVariable(
        "NOTIFY_CONCURRENCY", "pushes in flight at once per provider, shared by its lanes and its apps (APNs streams included)", default: "2048")
    static let appConcurrency = EnvironmentVariable(
        "NOTIFY_APP_CONCURRENCY",
        "an app's share of a provider's pushes in flight while other apps wait; an app at its share whose answers take over 1 s has its further pushes parked",
        default: "128")
    static let prefetch = EnvironmentVariable(
        "NOTIFY_PREFETCH", "interactive push-job messages taken from the broker at once per provider (above the messages a slow app's share can hold)",
        default: "512")
    static let bulkPrefetch = EnvironmentVariable(
        "NOTIFY_BULK_PREFETCH", "broadcast push-job messages (up to 500 jobs each) taken from the broker at once per provider", default: "16")
    static let feedbackInterval = EnvironmentVariable(
        "NOTIFY_FEEDBACK_INTERVAL_MS", "how long outcomes gather before they go to push.feedback in one message (sooner when half the prefetch waits for them)",
        default: "200")
    static let retryDelays = EnvironmentVariable(
        "NOTIFY_RETRY_DELAYS_MS", "comma-separated delays (ms) before each retry of a transient failure; their count bounds the retries",
        default: "1000,5000,25000,125000,600000")
    static let webhookAttempts = EnvironmentVariable(
        "NOTIFY_WEBHOOK_MAX_ATTEMPTS", "attempts to POST a webhook event (0.5 s apart, then twice as long each time) before it is dead-lettered",
        default: "8")
    static let healthPort = EnvironmentVariable.healthPort(default: 8083)

    public static let variables: [EnvironmentVariable] = [
        .amqpURL, databaseURL, trustedCA, concurrency, prefetch, feedbackInterval,
        appConcurrency, bulkPrefetch, retryDelays, webhookAttempts, .outboundAllow, .secretKeys, .secretKeysFile, .httpHost, healthPort, .logLevel, .logFormat,
    ]

    /// The defaults, with the database and the keys given.
    public init(databaseURL: String, secretKeys: SecretKeyring, amqp: AMQPConfiguration = AMQPConfiguration()) {
        self.amqp = amqp
        self.databaseURL = databaseURL
        self.secretKeys = secretKeys
    }

    public init(environment: ServiceEnvironment) throws(ConfigurationError) {
        let amqp = try environment.amqpConfiguration()
        self.init(databaseURL: try environment.requireDatabaseURL(Self.databaseURL), secretKeys: try environment.secretKeyring(), amqp: amqp)
        trustedCAFile = environment.string(Self.trustedCA)
        outboundPolicy = try environment.outboundPolicy()
        retryDelaysMilliseconds = try Self.delays(in: environment)
        concurrency = try environment.integer(Self.concurrency)
        appConcurrency = try environment.integer(Self.appConcurrency)
        prefetch = try environment.integer(Self.prefetch)
        bulkPrefetch = try environment.integer(Self.bulkPrefetch)
        feedbackInterval = .milliseconds(try environment.integer(Self.feedbackInterval))
        maximumWebhookAttempts = max(try environment.integer(Self.webhookAttempts), 1)
        httpHost = try environment.require(.httpHost)
        healthPort = try environment.integer(Self.healthPort)
        logging = LogSettings(environment: environment)
    }

    /// NOTIFY_RETRY_DELAYS_MS: positive integers separated by commas.
    private static func delays(in environment: ServiceEnvironment) throws(ConfigurationError) -> [Int] {
        let text = try environment.require(Self.retryDelays)
        let delays = text.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard !delays.isEmpty, delays.count == text.split(separator: ",").count, delays.allSatisfy({ $0 > 0 }) else {
            throw ConfigurationError("NOTIFY_RETRY_DELAYS_MS must be positive integers separated by commas, got '\(text)'")
        }
        return delays
    }
}
