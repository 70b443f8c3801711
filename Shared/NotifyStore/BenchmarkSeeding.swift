import Foundation
import Logging
import NotifyDatabase
import NotifyModels
import PostgresNIO

/// Rows written straight into the tables for benchmarks (loadgen) and the end-to-end tests' big broadcast audiences:
/// an app and a million subscriptions take seconds this way, hours through the API. Never used by the services; the
/// rows are what storage would have written.
public struct BenchmarkSeeding: Sendable {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// An app with throwaway keys (reached by no API call).
    public func app(_ appId: String, name: String) async throws {
        try await client.query(
            """
            INSERT INTO apps (app_id, name, api_key_hash, client_signing_key, created_at)
            VALUES (\(appId), \(name), \(UUID().uuidString), \(UUID().uuidString), now())
            """, logger: logger)
    }

    /// APNs subscriptions, one per user of `users` with the token at the same index, valid for a day; in `eventSource`
    /// too when given, each with the membership parameters at its index when `parameters` are given. At most 10,000 a
    /// call is what they were measured with.
    public func subscriptions(
        appId: String, users: [String], tokens: [String], eventSource: String? = nil, parameters: [[String: JSONValue]]? = nil
    ) async throws {
        let ids = users.map { _ in UUID() }
        let parametersJSON = try (parameters ?? []).map(JSONColumn.text)
        guard let eventSource else {
            try await client.query(
                """
                INSERT INTO subscriptions (subscription_id, app_id, user_id, platform, push_token, expires_at, registered_at)
                SELECT id, \(appId), usr, 'apns', token, now() + interval '1 day', now()
                FROM unnest(\(ArrayParameter(ids))::uuid[], \(ArrayParameter(users))::text[], \(ArrayParameter(tokens))::text[]) AS t(id, usr, token)
                """, logger: logger)
            return
        }
        try await client.query(
            """
            WITH added AS (
                INSERT INTO subscriptions (subscription_id, app_id, user_id, platform, push_token, expires_at, registered_at)
                SELECT id, \(appId), usr, 'apns', token, now() + interval '1 day', now()
                FROM unnest(\(ArrayParameter(ids))::uuid[], \(ArrayParameter(users))::text[], \(ArrayParameter(tokens))::text[]) AS t(id, usr, token)
                RETURNING subscription_id
            )
            INSERT INTO event_source_members (app_id, event_source, subscription_id, parameters)
            SELECT \(appId), \(eventSource), subscription_id, p.parameters::jsonb FROM added
            LEFT JOIN unnest(\(ArrayParameter(ids))::uuid[], \(ArrayParameter(parametersJSON))::text[]) AS p(id, parameters) ON p.id = added.subscription_id
            """, logger: logger)
    }

    /// VACUUM ANALYZE of the tables an audience was seeded into, as autovacuum would soon do it (or it lands in the
    /// broadcast measured next: several seconds of CPU for a million rows).
    public func settleAudienceTables() async throws {
        try await client.query("VACUUM (ANALYZE) subscriptions, event_source_members, device_versions", logger: logger)
    }

    /// Each user's devices version in the app, as storage puts it into the user's change events.
    public func devicesVersions(appId: String) async throws -> [String: Int64] {
        var versions: [String: Int64] = [:]
        let rows = try await client.query("SELECT user_id, version FROM device_versions WHERE app_id = \(appId)", logger: logger)
        for try await (user, version) in rows.decode((String, Int64).self) { versions[user] = version }
        return versions
    }

    /// Transactions committed and rolled back in the database since its statistics were reset (`pg_stat_database`;
    /// backends report theirs at most once a second while busy, and up to 10 s late once idle).
    public func transactionCounts() async throws -> (commits: Int, rollbacks: Int)? {
        let rows = try await client.query(
            "SELECT xact_commit, xact_rollback FROM pg_stat_database WHERE datname = current_database()", logger: logger)
        for try await (commits, rollbacks) in rows.decode((Int, Int).self) { return (commits, rollbacks) }
        return nil
    }
}
