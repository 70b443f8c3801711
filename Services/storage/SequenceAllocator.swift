import Logging
import NotifyDatabase
import PostgresNIO

/// Hands out each user's next change sequence numbers.
///
/// Why a reader never skips a change: the counter is a row per user, incremented with
/// `INSERT ... ON CONFLICT DO UPDATE`, which holds that row's lock until the transaction ends.
/// A second writer for the same user waits for the first to commit before it can take the next
/// number, so sequence numbers of one user become visible in order: whoever sees N+1 can already see N.
/// (A global sequence would not give this: a transaction holding a lower number may commit later.)
struct SequenceAllocator {
    let logger: Logger

    /// One sequence number per entry of `users`, in order; entries of the same user get consecutive numbers.
    func allocate(for users: [UserKey], on connection: PostgresConnection) async throws -> [Int64] {
        var counts: [UserKey: Int64] = [:]
        for user in users { counts[user, default: 0] += 1 }
        // Lock rows in one order so concurrent batches cannot deadlock.
        let ordered = counts.sorted { ($0.key.appId, $0.key.userId) < ($1.key.appId, $1.key.userId) }
        let appIds = ordered.map(\.key.appId)
        let userIds = ordered.map(\.key.userId)
        let increments = ordered.map(\.value)
        var next: [UserKey: Int64] = [:]
        let rows = try await connection.query(
            """
            INSERT INTO user_sequences (app_id, user_id, last_sequence)
            SELECT * FROM unnest(\(ArrayParameter(appIds))::text[], \(ArrayParameter(userIds))::text[], \(ArrayParameter(increments))::int8[])
            ON CONFLICT (app_id, user_id) DO UPDATE SET last_sequence = user_sequences.last_sequence + EXCLUDED.last_sequence
            RETURNING app_id, user_id, last_sequence
            """, logger: logger)
        for try await (appId, userId, last) in rows.decode((String, String, Int64).self) {
            let key = UserKey(appId: appId, userId: userId)
            next[key] = last - (counts[key] ?? 0) + 1
        }
        return users.map { user in
            let value = next[user]!
            next[user] = value + 1
            return value
        }
    }
}
