import Foundation
import Logging
import NotifyDatabase
import NotifyStore
import NotifyTestSupport
import PostgresNIO

@testable import StorageCore

/// The test stack's PostgreSQL (`NOTIFY_WRITER_DATABASE_URL`), migrated, with storage's command applier on it.
enum StorageTestDatabase {
    static let databaseURL = ProcessInfo.processInfo.environment["NOTIFY_WRITER_DATABASE_URL"]
        ?? "postgres://notify_writer:notify_writer@127.0.0.1:22432/notify"

    static func withApplier<Value: Sendable>(_ body: (CommandBatchApplier, PostgresClient) async throws -> Value) async throws -> Value {
        let logger = Logger(label: "storage-core-tests")
        let client = try DatabaseURL.makeClient(databaseURL, logger: logger)
        return try await withRunning(client) {
            try await Migrations(client: client, readerRole: "notify_reader", logger: logger).run()
            return try await body(CommandBatchApplier(client: client, logger: logger), client)
        }
    }
}
