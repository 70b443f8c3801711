import Foundation
import Logging
import NotifyDatabase
import NotifyModels
import NotifyStore
import NotifyTestSupport
import PostgresNIO

/// A database of a test's own in the test stack's PostgreSQL, beside the shared one, for what must not meet the stack's
/// services (e.g. a second provisioner of broker users): created by PostgreSQL's superuser, which the local scripts'
/// cluster trusts on the loopback, owned by the writer role, migrated; dropped afterwards.
public enum ScratchDatabase {
    /// Runs `body` with a client of a new database on the server and as the role of `writerURL`, then drops it.
    public static func with<Value>(writerURL: String, logger: Logger, _ body: (PostgresClient) async throws -> Value) async throws -> Value {
        var configuration = try DatabaseURL.clientConfiguration(writerURL)
        let owner = configuration.username
        let name = "notify_scratch_\(UUID().lowercasedString.prefix(8))"
        var superuserConfiguration = configuration
        superuserConfiguration.username = "postgres"
        superuserConfiguration.password = nil
        superuserConfiguration.database = "postgres"
        configuration.database = name
        let superuser = PostgresClient(configuration: superuserConfiguration, backgroundLogger: logger)
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        return try await withRunning(superuser) {
            try await superuser.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name) OWNER \(owner)"), logger: logger)
            let outcome: Result<Value, any Error>
            do {
                outcome = .success(try await withRunning(client) {
                    try await Migrations(client: client, readerRole: "notify_reader", logger: logger).run()
                    return try await body(client)
                })
            } catch {
                outcome = .failure(error)
            }
            try await superuser.query(PostgresQuery(unsafeSQL: "DROP DATABASE \(name) WITH (FORCE)"), logger: logger)
            return try outcome.get()
        }
    }
}
