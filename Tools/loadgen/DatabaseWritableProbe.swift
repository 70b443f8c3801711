import Foundation
import Logging
import NotifyDatabase
import NotifyStore
import PostgresNIO

/// Times how long the database takes to accept writes again after a fault: a new connection to the writer's URL
/// (HAProxy's primary port on a Patroni cluster) every 100 ms until it reaches a server out of recovery.
struct DatabaseWritableProbe: Sendable {
    let configuration: PostgresConnection.Configuration

    /// `url` is `postgres://user:password@host:port/database` on a loopback host.
    init(url: String) throws {
        try LoopbackURL.requireLoopbackDatabase(url)
        configuration = try DatabaseURL.connectionConfiguration(url)
    }

    /// Seconds from `start` until the database accepts writes; nil when it did not within `timeout`.
    func secondsUntilWritable(since start: ContinuousClock.Instant, timeout: Duration) async -> Double? {
        var logger = Logger(label: "loadgen")
        logger.logLevel = .critical
        while ContinuousClock.now - start < timeout {
            if await DatabaseHealth.acceptsWrites(configuration, logger: logger) { return (ContinuousClock.now - start).inSeconds }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }
}
