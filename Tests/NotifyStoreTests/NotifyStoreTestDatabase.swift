import Foundation
import Logging
import NotifyDatabase
import PostgresNIO

@testable import NotifyStore

/// The test stack's PostgreSQL (`NOTIFY_WRITER_DATABASE_URL`, localhost's test port by default), migrated.
enum NotifyStoreTestDatabase {
    static let databaseURL = ProcessInfo.processInfo.environment["NOTIFY_WRITER_DATABASE_URL"]
        ?? "postgres://notify_writer:notify_writer@127.0.0.1:22432/notify"

    static let logger = Logger(label: "notify-store-tests")

    /// Runs `body` with a client of the migrated database and storage's command applier on it (what writes the rows
    /// the stores read).
    static func withDatabase<Value: Sendable>(_ body: (PostgresClient, CommandBatchApplier) async throws -> Value) async throws -> Value {
        let client = try DatabaseURL.makeClient(databaseURL, logger: logger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            try await Migrations(client: client, readerRole: "notify_reader", logger: logger).run()
            return try await body(client, CommandBatchApplier(client: client, logger: logger))
        }
    }
}
