import PostgresNIO

/// Runs `client` (its connection pool) while `body` uses it, and stops it afterwards.
public func withRunning<Result>(_ client: PostgresClient, _ body: () async throws -> Result) async throws -> Result {
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { await client.run() }
        defer { group.cancelAll() }
        return try await body()
    }
}
