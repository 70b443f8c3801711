import Foundation
import Logging
import NotifyStoreTesting
import PostgresNIO

@testable import NotifyStore

/// A database of each test's own on the test stack's PostgreSQL (`NOTIFY_WRITER_DATABASE_URL`, localhost's test port by
/// default), migrated: the stack's storage (its broker-user provisioner, outbox relay, sweeps) never acts on the rows a
/// store is tested with.
enum NotifyStoreTestDatabase {
    static let databaseURL = ProcessInfo.processInfo.environment["NOTIFY_WRITER_DATABASE_URL"]
        ?? "postgres://notify_writer:notify_writer@127.0.0.1:22432/notify"

    /// Warnings and errors only: each test migrates a database of its own, and the migrations' lines would bury its output.
    static let logger: Logger = {
        var logger = Logger(label: "notify-store-tests")
        logger.logLevel = .warning
        return logger
    }()

    /// Runs `body` with a client of a new migrated database and storage's command applier on it (what writes the rows
    /// the stores read); the database is dropped afterwards.
    static func withDatabase<Value: Sendable>(_ body: (PostgresClient, CommandBatchApplier) async throws -> Value) async throws -> Value {
        try await ScratchDatabase.with(writerURL: databaseURL, logger: logger) { client in
            try await body(client, CommandBatchApplier(client: client, logger: logger))
        }
    }
}
