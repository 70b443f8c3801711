import Foundation
import NotifyModels
import PostgresNIO
import Testing

/// The schema's index on subscriptions' push tokens, as the lookup of a registration uses it.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["NOTIFY_TEST_STACK"] != nil, "needs PostgreSQL: run deploy/local/test.sh"))
struct SubscriptionTokenIndexTests {
    private static let logger = NotifyStoreTestDatabase.logger

    /// Registering looks the push token up as ingest does (app, platform, token). An index scan is what a table
    /// of millions of subscriptions gets; this one is small, so sequential and bitmap scans are ruled out first.
    /// On a small table the planner picks the unique index anyway; on a big one, any other index led by app_id
    /// ties with it for an app the statistics do not know, and won (its tree is a level lower): so no other
    /// index may be led by app_id.
    @Test("registering finds a push token through its unique index, even in an app the planner's statistics do not know yet")
    func tokenLookupUsesTheTokenIndex() async throws {
        let newApp = "app-\(UUID().lowercasedString.prefix(12))"
        let plan = try await NotifyStoreTestDatabase.withDatabase { client, _ in
            try await client.withTransaction(logger: Self.logger) { connection in
                try await connection.query("SET LOCAL enable_seqscan = off", logger: Self.logger)
                try await connection.query("SET LOCAL enable_bitmapscan = off", logger: Self.logger)
                let rows = try await connection.query(
                    "EXPLAIN SELECT subscription_id FROM subscriptions WHERE app_id = \(newApp) AND platform = 'apns' AND push_token = 'ab01'",
                    logger: Self.logger)
                var lines: [String] = []
                for try await line in rows.decode(String.self) { lines.append(line) }
                return lines.joined(separator: "\n")
            }
        }
        #expect(plan.contains("Index Scan using subscriptions_app_id_platform_push_token_key"), "\(plan)")

        let ledByApp = try await NotifyStoreTestDatabase.withDatabase { client, _ in
            let rows = try await client.query(
                """
                SELECT i.relname FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
                JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = x.indkey[0]
                WHERE x.indrelid = 'subscriptions'::regclass AND a.attname = 'app_id' ORDER BY 1
                """, logger: Self.logger)
            var names: [String] = []
            for try await name in rows.decode(String.self) { names.append(name) }
            return names
        }
        #expect(ledByApp == ["subscriptions_app_id_platform_push_token_key"])
    }
}
