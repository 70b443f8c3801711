import Logging
import PostgresNIO

/// Reads each user's count of unread, active notifications (the badge), inside the writing transaction.
/// The counts are kept by triggers on `notifications` (schema migration 7), so reading them costs one
/// row per user however many notifications the user has.
struct UnreadCounter {
    let logger: Logger

    func counts(appIds: [String], userIds: [String], on connection: PostgresConnection) async throws -> [UserKey: Int] {
        var result: [UserKey: Int] = [:]
        let rows = try await connection.query(
            """
            SELECT c.app_id, c.user_id, c.unread
            FROM unread_counts c
            JOIN (SELECT DISTINCT app, usr FROM unnest(\(appIds)::text[], \(userIds)::text[]) AS t(app, usr)) u
              ON c.app_id = u.app AND c.user_id = u.usr
            """, logger: logger)
        for try await (appId, userId, count) in rows.decode((String, String, Int64).self) {
            result[UserKey(appId: appId, userId: userId)] = Int(count)
        }
        return result
    }
}
