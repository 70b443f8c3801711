import Logging
import NotifyDatabase
import PostgresNIO

/// Stored rows read as text (each row as `row_to_json`), to prove a secret is nowhere in the database in plaintext.
public struct PlaintextSearch: Sendable {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// The app's rows in each of `tables` (tables with an `app_id` column), one JSON text a row.
    public func rows(ofApp appId: String, in tables: [String]) async throws -> [String] {
        var rows: [String] = []
        for table in tables {
            var binds = PostgresBindings()
            binds.append(appId)
            let query = PostgresQuery(unsafeSQL: "SELECT row_to_json(t)::text FROM \(table) t WHERE app_id = $1", binds: binds)
            for try await row in try await client.query(query, logger: logger).decode(String.self) { rows.append(row) }
        }
        return rows
    }

    /// The database's tables (those of the public schema).
    public func tables() async throws -> [String] {
        var tables: [String] = []
        let rows = try await client.query(
            "SELECT table_name::text FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'", logger: logger)
        for try await table in rows.decode(String.self) { tables.append(table) }
        return tables
    }

    /// How many rows of `table` hold any of `texts` somewhere in their text.
    public func rowCount(in table: String, containingAnyOf texts: [String]) async throws -> Int {
        var binds = PostgresBindings()
        binds.append(ArrayParameter(texts))
        let query = PostgresQuery(
            unsafeSQL: """
                SELECT count(*) FROM \(table) t
                WHERE EXISTS (SELECT 1 FROM unnest($1::text[]) AS s(text) WHERE strpos(row_to_json(t)::text, s.text) > 0)
                """,
            binds: binds)
        for try await count in try await client.query(query, logger: logger).decode(Int64.self) { return Int(count) }
        return 0
    }
}
