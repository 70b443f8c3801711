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
        await Self.withinTwoSeconds { [client, logger] in
            (try? await client.query("SELECT 1", logger: logger)) != nil
        }
    }

    /// `probe`'s answer, or false when it has none within two seconds (it is cancelled then).
    private static func withinTwoSeconds(_ probe: @escaping @Sendable () async -> Bool) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask(operation: probe)
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

extension DatabaseHealth {
    /// Whether a new connection made with `configuration` reaches a primary (a server that is not in recovery, so takes
    /// writes) within two seconds: how a chaos run times a failover, without a pool's reconnection backoff in the way.
    public static func acceptsWrites(_ configuration: PostgresConnection.Configuration, logger: Logger) async -> Bool {
        await withinTwoSeconds {
            guard let connection = try? await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger) else {
                return false
            }
            defer { Task { try? await connection.close() } }
            guard let rows = try? await connection.query("SELECT NOT pg_is_in_recovery()", logger: logger),
                let row = try? await rows.collect().first
            else { return false }
            return (try? row.decode(Bool.self)) ?? false
        }
    }
}
