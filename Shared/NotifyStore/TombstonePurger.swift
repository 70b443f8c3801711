import Foundation
import Logging
import PostgresNIO

/// Forgets what is older than the retention: change-log rows, tombstones (deleted and expired
/// notifications), broadcasts expired before it, applied-command records, the delivery log, and webhook events already relayed with their
/// delivery log. Each user's `purged_through` records the newest
/// sequence forgotten, so a device whose cursor is older is told to resync rather than silently
/// missing a change.
struct TombstonePurger {
    let connection: PostgresConnection
    let logger: Logger

    func purge(olderThan cutoff: Date) async throws {
        try await connection.query(
            """
            WITH gone AS (
                DELETE FROM changes WHERE changed_at < \(cutoff) RETURNING app_id, user_id, sequence
            ), newest AS (
                SELECT app_id, user_id, max(sequence) AS through FROM gone GROUP BY app_id, user_id
            )
            UPDATE user_sequences u SET purged_through = GREATEST(u.purged_through, newest.through)
            FROM newest WHERE u.app_id = newest.app_id AND u.user_id = newest.user_id
            """, logger: logger)
        try await connection.query(
            "DELETE FROM notifications WHERE status <> 'active' AND updated_at < \(cutoff)", logger: logger)
        // A broadcast goes once it expired before the cutoff, with its users' states (a state row stays while its broadcast
        // does: a user's deletion of it must last as long as the broadcast).
        try await connection.query(
            """
            WITH gone AS (DELETE FROM broadcasts WHERE expires_at < \(cutoff) RETURNING notification_id)
            DELETE FROM broadcast_states WHERE notification_id IN (SELECT notification_id FROM gone)
            """, logger: logger)
        try await connection.query(
            "DELETE FROM applied_commands WHERE applied_at < \(cutoff)", logger: logger)
        try await connection.query(
            "DELETE FROM delivery_records WHERE recorded_at < \(cutoff)", logger: logger)
        try await connection.query(
            "DELETE FROM webhook_events WHERE published_at < \(cutoff)", logger: logger)
        try await connection.query(
            "DELETE FROM webhook_deliveries WHERE at < \(cutoff)", logger: logger)
        logger.info("purged changes and tombstones", metadata: ["olderThan": "\(cutoff)"])
    }
}
