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

    /// Prepared once per connection: it runs with every batch. The query is the function `user_states` (schema
    /// migration 26), which plans it once per connection instead of at every execution.
    struct Statement: PostgresPreparedStatement {
        static let sql = "SELECT app_id, user_id, badge, devices_version FROM user_states($1::text[], $2::text[])"

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
