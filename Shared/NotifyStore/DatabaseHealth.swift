import Logging
import PostgresNIO

/// The services' database health probe (their `/health` check "database"): whether the database answers a query.
public struct DatabaseHealth: Sendable {
    public let client: PostgresClient
    public let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Whether a trivial query answers within two seconds.
    public func check() async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                (try? await client.query("SELECT 1", logger: logger)) != nil
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(2))
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }
}
