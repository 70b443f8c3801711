import Foundation
import Logging
import NotifyTestSupport
import PostgresNIO

/// Read access to what storage wrote, through the writer URL (`NOTIFY_WRITER_DATABASE_URL`).
enum Database {
    /// Runs `body` with a connected client, closing it afterwards.
    static func withClient<Result>(_ body: (PostgresClient) async throws -> Result) async throws -> Result {
        guard let url = URLComponents(string: Stack.writerDatabaseURL), let host = url.host, let user = url.user else {
            throw TestFailure("NOTIFY_WRITER_DATABASE_URL is not postgres://user:password@host:port/database: \(Stack.writerDatabaseURL)")
        }
        let configuration = PostgresClient.Configuration(
            host: host, port: url.port ?? 5432, username: user, password: url.password,
            database: String(url.path.dropFirst()), tls: .disable)
        let client = PostgresClient(configuration: configuration, backgroundLogger: testLogger)
        return try await withRunning(client) { try await body(client) }
    }

    /// Polls a query answering one integer until `condition` holds, up to `timeout`; returns the last answer.
    static func waitForInteger(
        _ query: PostgresQuery, on client: PostgresClient, timeout: Duration = .seconds(20), until condition: (Int64) -> Bool
    ) async throws -> Int64 {
        let deadline = ContinuousClock.now + timeout
        while true {
            let value = try await integer(query, on: client)
            if condition(value) { return value }
            guard ContinuousClock.now < deadline else { throw TestFailure("\(query.sql) still answered \(value) after \(timeout)") }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// The single integer a query answers (e.g. a count).
    static func integer(_ query: PostgresQuery, on client: PostgresClient) async throws -> Int64 {
        let rows = try await client.query(query, logger: testLogger)
        for try await value in rows.decode(Int64.self) { return value }
        throw TestFailure("the query answered no row: \(query.sql)")
    }
}
