import Logging
import PostgresNIO

/// Apps' broker users as storage provisions them in RabbitMQ (`app_broker_users`): those recorded but not created yet,
/// and those whose retirement came.
public struct BrokerUserStore: Sendable {
    /// A user to create: its name, app, and RabbitMQ's hash of its password.
    public struct Pending: Sendable, Equatable {
        public var user: String
        public var appId: String
        public var passwordHash: String
    }

    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Users recorded with a password hash and not created yet (nor retired), oldest first, at most `limit`.
    public func pending(limit: Int) async throws -> [Pending] {
        var pending: [Pending] = []
        let rows = try await client.query(
            """
            SELECT user_name, app_id, password_hash FROM app_broker_users
            WHERE provisioned_at IS NULL AND password_hash IS NOT NULL AND (retires_at IS NULL OR retires_at > now())
            ORDER BY created_at LIMIT \(limit)
            """, logger: logger)
        for try await (user, appId, hash) in rows.decode((String, String, String).self) {
            pending.append(Pending(user: user, appId: appId, passwordHash: hash))
        }
        return pending
    }

    /// Marks the user created (and forgets its password hash); false when its row is gone (retired and deleted
    /// meanwhile), so the user just created must go again.
    public func markProvisioned(_ user: String) async throws -> Bool {
        try await client.query(
            "UPDATE app_broker_users SET provisioned_at = now(), password_hash = NULL WHERE user_name = \(user) RETURNING user_name", logger: logger
        ).collect().count > 0
    }

    /// Users whose retirement came, earliest first, at most `limit`: name and app.
    public func retired(limit: Int) async throws -> [(user: String, appId: String)] {
        var retired: [(user: String, appId: String)] = []
        let rows = try await client.query(
            "SELECT user_name, app_id FROM app_broker_users WHERE retires_at <= now() ORDER BY retires_at LIMIT \(limit)", logger: logger)
        for try await row in rows.decode((String, String).self) { retired.append(row) }
        return retired
    }

    /// Forgets a retired user (once RabbitMQ deleted it).
    public func forgetRetired(_ user: String) async throws {
        try await client.query("DELETE FROM app_broker_users WHERE user_name = \(user) AND retires_at <= now()", logger: logger)
    }
}
