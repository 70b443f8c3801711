import Logging
import NotifyDatabase
import PostgresNIO

/// Reads, inside the writing transaction, what every change event of a user carries once the batch is applied:
/// the count of unread, active notifications (the badge) and the version of the user's set of devices. Both are
/// kept by triggers (schema migrations 7 and 9), so reading them costs one row each per user. The badge is what the
/// app's badge mode counts: the unread count, with the unread broadcasts in the user's feed (`unread_broadcasts`), the
/// app server's number (`external_badges`), or none.
struct UserStateReader {
    struct UserState {
        /// The badge as the app's mode counts it; nil: the app's pushes carry none.
        var badge: Int?
        /// 0 for a user who never had a subscription.
        var devicesVersion: Int64
    }

    let logger: Logger

    func states(appIds: [String], userIds: [String], on connection: PostgresConnection) async throws -> [UserKey: UserState] {
        var result: [UserKey: UserState] = [:]
        let rows = try await connection.execute(Statement(appIds: ArrayParameter(appIds), userIds: ArrayParameter(userIds)), logger: logger)
        for try await (appId, userId, badge, devicesVersion) in rows {
            result[UserKey(appId: appId, userId: userId)] = UserState(badge: badge.map(Int.init), devicesVersion: devicesVersion)
        }
        return result
    }

    /// Prepared once per connection: it runs with every batch.
    struct Statement: PostgresPreparedStatement {
        static let sql = """
            SELECT u.app, u.usr,
                   CASE a.badge_mode
                       WHEN 'none' THEN NULL
                       WHEN 'external' THEN coalesce((SELECT badge FROM external_badges e WHERE e.app_id = u.app AND e.user_id = u.usr), 0)
                       WHEN 'unreadIncludingBroadcasts' THEN coalesce(c.unread, 0) + unread_broadcasts(u.app, u.usr)
                       ELSE coalesce(c.unread, 0)
                   END,
                   coalesce(d.version, 0)
            FROM (SELECT DISTINCT app, usr FROM unnest($1::text[], $2::text[]) AS t(app, usr)) u
            LEFT JOIN apps a ON a.app_id = u.app
            LEFT JOIN unread_counts c ON c.app_id = u.app AND c.user_id = u.usr
            LEFT JOIN device_versions d ON d.app_id = u.app AND d.user_id = u.usr
            """

        typealias Row = (String, String, Int64?, Int64)

        var appIds: ArrayParameter<String>
        var userIds: ArrayParameter<String>

        func makeBindings() -> PostgresBindings {
            PostgresBindings(appIds, userIds)
        }

        func decodeRow(_ row: PostgresRow) throws -> Row {
            try row.decode(Row.self)
        }
    }
}
