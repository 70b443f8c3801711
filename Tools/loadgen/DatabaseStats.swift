import Foundation
import Logging
import NotifyDatabase
import NotifyStore

/// The notify database's transaction counters (`pg_stat_database`), read through the writer's URL. PostgreSQL's
/// backends report theirs at most once a second while busy, and up to 10 s late once idle.
final class DatabaseStats: Sendable {
    /// Transactions committed and rolled back in the database since its statistics were reset.
    struct Counts: Sendable {
        let commits: Int
        let rollbacks: Int
    }

    private let seeding: BenchmarkSeeding
    private let running: Task<Void, Never>

    /// `url` is `postgres://user:password@host:port/database` on a loopback host.
    init(url: String) throws {
        try LoopbackURL.requireLoopbackDatabase(url)
        var logger = Logger(label: "loadgen")
        logger.logLevel = .warning
        let client = try DatabaseURL.makeClient(url, maximumConnections: 1, logger: logger)
        seeding = BenchmarkSeeding(client: client, logger: logger)
        running = Task { await client.run() }
    }

    func counts() async throws -> Counts {
        guard let counts = try await seeding.transactionCounts() else { throw LoadGenError("pg_stat_database has no row for the database") }
        return Counts(commits: counts.commits, rollbacks: counts.rollbacks)
    }

    /// Closes the connection.
    func close() {
        running.cancel()
    }
}
