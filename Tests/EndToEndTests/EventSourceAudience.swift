import NotifyTestSupport
import PostgresNIO

/// Big event-source audiences for broadcast tests, written straight into PostgreSQL (registering each device through
/// the API would take minutes).
enum EventSourceAudience {
    /// Adds `count` APNs members to the app's event source, users `<userPrefix>1`..., each with a subscription active for a
    /// day and a push token derived from the source and its number.
    static func seed(_ count: Int, userPrefix: String, of source: String, in app: TestApp, on client: PostgresClient) async throws {
        try await client.query(
            """
            WITH added AS (
                INSERT INTO subscriptions (subscription_id, app_id, user_id, platform, push_token, expires_at, registered_at)
                SELECT gen_random_uuid(), \(app.appId), \(userPrefix) || n, 'apns', encode(sha256(convert_to(\(source) || n, 'UTF8')), 'hex'),
                       now() + interval '1 day', now()
                FROM generate_series(1, \(count)) AS n
                RETURNING subscription_id
            )
            INSERT INTO event_source_members (app_id, event_source, subscription_id)
            SELECT \(app.appId), \(source), subscription_id FROM added
            """, logger: testLogger)
    }

    /// The push token of the member at `offset` in the audience's order (the order a broadcast pages in).
    static func member(at offset: Int, of source: String, in app: TestApp, on client: PostgresClient) async throws -> String {
        try await token(
            """
            SELECT s.push_token FROM event_source_members m JOIN subscriptions s USING (subscription_id)
            WHERE m.app_id = \(app.appId) AND m.event_source = \(source) ORDER BY m.subscription_id OFFSET \(offset) LIMIT 1
            """, on: client)
    }

    /// The one push token `query` answers.
    static func token(_ query: PostgresQuery, on client: PostgresClient) async throws -> String {
        for try await token in try await client.query(query, logger: testLogger).decode(String.self) { return token }
        throw TestFailure("no member answered \(query.sql)")
    }
}
