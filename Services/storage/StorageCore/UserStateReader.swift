import Logging
import NotifyDatabase
import PostgresNIO

/// Reads, inside the writing transaction, what every change event of a user carries once the batch is applied:
/// the count of unread, active notifications (the badge) and the version of the user's set of devices. Both are
/// kept by triggers (schema migrations 7 and 9), so reading them costs one row each per user. Where the app's badge
/// mode counts broadcasts, the unread broadcasts in the user's feed are counted too (`unread_broadcasts`).
struct UserStateReader {
    struct UserState {
        var unreadCount: Int
        /// 0 for a user who never had a subscription.
        var devicesVersion: Int64
    }

    let logger: Logger

    func states(appIds: [String], userIds: [String], on connection: PostgresConnection) async throws -> [UserKey: UserState] {
        var result: [UserKey: UserState] = [:]
        let rows = try await connection.execute(Statement(appIds: ArrayParameter(appIds), userIds: ArrayParameter(userIds)), logger: logger)
        for try await (appId, userId, unread, devicesVersion) in rows {
            result[UserKey(appId: appId, userId: userId)] = UserState(unreadCount: Int(unread), devicesVersion: devicesVersion)
        }
        return result
    }

    /// Prepared once per connection: it runs with every batch.
    struct Statement: PostgresPreparedStatement {
        static let sql = """
            SELECT u.app, u.usr,
                   coalesce(c.unread, 0) + CASE WHEN a.badge_mode = 'unreadIncludingBroadcasts' THEN unread_broadcasts(u.app, u.usr) ELSE 0 END,
                   coalesce(d.version, 0)
            FROM (SELECT DISTINCT app, usr FROM unnest($1::text[], $2::text[]) AS t(app, usr)) u
            LEFT JOIN apps a ON a.app_id = u.app
            LEFT JOIN unread_counts c ON c.app_id = u.app AND c.user_id = u.usr
            LEFT JOIN device_versions d ON d.app_id = u.app AND d.user_id = u.usr
            """

        typealias Row = (String, String, Int64, Int64)

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
