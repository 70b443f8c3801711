import Logging
import PostgresNIO

/// Counts each user's unread, active notifications (the badge), inside the writing transaction.
struct UnreadCounter {
    let logger: Logger

    func counts(appIds: [String], userIds: [String], on connection: PostgresConnection) async throws -> [UserKey: Int] {
        var result: [UserKey: Int] = [:]
        let rows = try await connection.query(
            """
            SELECT n.app_id, n.user_id, count(*)
            FROM notifications n
            JOIN (SELECT DISTINCT app, usr FROM unnest(\(appIds)::text[], \(userIds)::text[]) AS t(app, usr)) u
              ON n.app_id = u.app AND n.user_id = u.usr
            WHERE n.read_state = 'unread' AND n.status = 'active'
            GROUP BY n.app_id, n.user_id
            """, logger: logger)
        for try await (appId, userId, count) in rows.decode((String, String, Int64).self) {
            result[UserKey(appId: appId, userId: userId)] = Int(count)
        }
        return result
    }
}
