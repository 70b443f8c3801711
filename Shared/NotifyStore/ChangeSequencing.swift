import NotifyModels

/// SQL pieces shared by every statement that changes notifications: each change takes its user's next
/// sequence number and a row in the `changes` log, within the statement that makes the change, so a change
/// costs one round trip to the database whatever it touches.
///
/// Why a reader never skips a change: the counter is a row per user, incremented with
/// `INSERT ... ON CONFLICT DO UPDATE`, which holds that row's lock until the transaction ends.
/// A second writer for the same user waits for the first to commit before it can take the next
/// number, so sequence numbers of one user become visible in order: whoever sees N+1 can already see N.
/// (A global sequence would not give this: a transaction holding a lower number may commit later.)
enum ChangeSequencing {
    /// Two CTEs: `allocated` moves the counters of the users in `source` (a relation with columns `app`, `usr`
    /// and `ord`, the order of the changes) on by their count of changes, and `numbered` is `source` with
    /// `seq`, each user's changes numbered consecutively in `ord` order.
    static func numbering(from source: String) -> String {
        // Counter rows are locked in one order (by user), so concurrent batches cannot deadlock.
        """
        allocated AS (
            INSERT INTO user_sequences AS s (app_id, user_id, last_sequence)
            SELECT app, usr, count(*) FROM \(source) GROUP BY app, usr ORDER BY app, usr
            ON CONFLICT (app_id, user_id) DO UPDATE SET last_sequence = s.last_sequence + EXCLUDED.last_sequence
            RETURNING app_id, user_id, last_sequence
        ),
        numbered AS (
            SELECT i.*, a.last_sequence - count(*) OVER by_user + row_number() OVER (by_user ORDER BY i.ord) AS seq
            FROM \(source) i JOIN allocated a ON a.app_id = i.app AND a.user_id = i.usr
            WINDOW by_user AS (PARTITION BY i.app, i.usr)
        )
        """
    }

    /// A CTE, `logged`, that writes a row of the `changes` log for every row of `source` (columns `app`, `usr`,
    /// `seq`, `id` and `at`, the time of the change); `kind` is an SQL expression over them.
    static func logging(from source: String, kind: String) -> String {
        """
        logged AS (
            INSERT INTO changes (app_id, user_id, sequence, notification_id, kind, changed_at)
            SELECT app, usr, seq, id, \(kind), at FROM \(source)
        )
        """
    }

    /// `kind` as an SQL literal (the raw values are fixed identifiers).
    static func literal(_ kind: ChangeKind) -> String {
        "'\(kind.rawValue)'"
    }
}
