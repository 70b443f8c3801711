import Foundation
import Logging
import NotifyDatabase
import NotifyModels
import PostgresNIO

/// Reads of the stores' tables that no store makes and only tests need: raw rows and counts, to prove what storage
/// wrote or did not write (a command recorded once, a change log without gaps, a kept count that matches a recount,
/// a broker user's hash cleared).
public struct StoreInspection: Sendable {
    /// A broker user's row in `app_broker_users`.
    public struct BrokerUserRow: Sendable, Equatable {
        /// RabbitMQ's hash of its password, kept until storage created the user.
        public var passwordHash: String?
        /// Whether storage created it in RabbitMQ.
        public var provisioned: Bool

        public init(passwordHash: String?, provisioned: Bool) {
            self.passwordHash = passwordHash
            self.provisioned = provisioned
        }
    }

    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// The sequences of the user's changes in the change log (`changes`), in order.
    public func changeSequences(appId: String, userId: String) async throws -> [Int64] {
        var sequences: [Int64] = []
        let rows = try await client.query(
            "SELECT sequence FROM changes WHERE app_id = \(appId) AND user_id = \(userId) ORDER BY sequence", logger: logger)
        for try await sequence in rows.decode(Int64.self) { sequences.append(sequence) }
        return sequences
    }

    /// How many notifications the user has, in any status.
    public func notificationCount(appId: String, userId: String) async throws -> Int {
        try await count("SELECT count(*) FROM notifications WHERE app_id = \(appId) AND user_id = \(userId)")
    }

    /// How many of the commands `ids` are recorded as applied (`applied_commands`).
    public func appliedCommandCount(of ids: [UUID]) async throws -> Int {
        try await count("SELECT count(*) FROM applied_commands WHERE command_id = ANY(\(ArrayParameter(ids))::uuid[])")
    }

    /// The user's unread count as the triggers keep it (`unread_counts`); nil when the user has no row.
    public func keptUnreadCount(appId: String, userId: String) async throws -> Int? {
        try await client.query("SELECT unread FROM unread_counts WHERE app_id = \(appId) AND user_id = \(userId)", logger: logger)
            .decode(Int64.self).first { _ in true }.map(Int.init)
    }

    /// How many users' kept unread counts differ from a recount of their unread, active notifications (a missing row
    /// counts as 0), every user in one snapshot.
    public func miscountedUnreadUsers() async throws -> Int {
        try await count(
            """
            SELECT count(*) FROM unread_counts c
            FULL JOIN (SELECT app_id, user_id, count(*) AS unread FROM notifications
                       WHERE read_state = 'unread' AND status = 'active' GROUP BY app_id, user_id) n
              ON c.app_id = n.app_id AND c.user_id = n.user_id
            WHERE coalesce(c.unread, 0) <> coalesce(n.unread, 0)
            """)
    }

    /// How many outcomes with `result` the delivery log holds for the notification: every outcome logged, each time it
    /// was logged.
    public func outcomeCount(appId: String, notificationId: UUID, result: PushOutcome.Result) async throws -> Int {
        try await count(
            """
            SELECT count(*) FROM delivery_records d, unnest(d.results) AS r
            WHERE d.app_id = \(appId) AND d.notification_id = \(notificationId) AND r = \(result.rawValue)
            """)
    }

    /// How each delivery-log row of the notification stores its `results` array (`pg_column_compression`: the method
    /// of a compressed value, nil for one stored uncompressed).
    public func resultsCompression(notificationId: UUID) async throws -> [String?] {
        var methods: [String?] = []
        let rows = try await client.query(
            "SELECT pg_column_compression(results) FROM delivery_records WHERE notification_id = \(notificationId)", logger: logger)
        for try await method in rows.decode(String?.self) { methods.append(method) }
        return methods
    }

    /// The members' push options stored with a broadcast (`broadcasts.recipient_push`) as JSON text, by user; nil when
    /// there is no such broadcast or it has none.
    public func recipientPush(ofBroadcast notificationId: UUID) async throws -> String? {
        try await client.query("SELECT recipient_push::text FROM broadcasts WHERE notification_id = \(notificationId)", logger: logger)
            .decode(String?.self).first { _ in true } ?? nil
    }

    /// The broker user's row; nil when there is none.
    public func brokerUser(_ user: String) async throws -> BrokerUserRow? {
        let rows = try await client.query(
            "SELECT password_hash, provisioned_at IS NOT NULL FROM app_broker_users WHERE user_name = \(user)", logger: logger)
        for try await (passwordHash, provisioned) in rows.decode((String?, Bool).self) {
            return BrokerUserRow(passwordHash: passwordHash, provisioned: provisioned)
        }
        return nil
    }

    /// How many broker users were recorded at `since` or later.
    public func brokerUserCount(createdSince since: Date) async throws -> Int {
        try await count("SELECT count(*) FROM app_broker_users WHERE created_at >= \(since)")
    }

    /// How many apps are named `name`.
    public func appCount(named name: String) async throws -> Int {
        try await count("SELECT count(*) FROM apps WHERE name = \(name)")
    }

    /// The one count `query` answers.
    private func count(_ query: PostgresQuery) async throws -> Int {
        for try await count in try await client.query(query, logger: logger).decode(Int64.self) { return Int(count) }
        return 0
    }
}
