import Foundation
import NotifyStoreTesting
import NotifyTestSupport
import PostgresNIO

/// Read access to what storage wrote, through the writer URL (`NOTIFY_WRITER_DATABASE_URL`): the stores' reads, and
/// `StoreInspection` for what only tests read.
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

    /// Runs `body` with an inspection of the stores' tables on a connected client.
    static func inspecting<Result>(_ body: (StoreInspection) async throws -> Result) async throws -> Result {
        try await withClient { try await body(StoreInspection(client: $0, logger: testLogger)) }
    }

    /// Polls `read` until `condition` holds on its answer, up to `timeout`; returns the last answer. `what` names the
    /// answer in the failure.
    static func waitFor<Value>(
        _ what: String, timeout: Duration = .seconds(20), _ read: () async throws -> Value, until condition: (Value) -> Bool
    ) async throws -> Value {
        let deadline = ContinuousClock.now + timeout
        while true {
            let value = try await read()
            if condition(value) { return value }
            guard ContinuousClock.now < deadline else { throw TestFailure("\(what) was still \(value) after \(timeout)") }
            try await Task.sleep(for: .milliseconds(100))
        }
    }
}
