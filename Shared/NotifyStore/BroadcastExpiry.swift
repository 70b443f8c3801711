import Foundation
import Logging
import NotifyModels
import PostgresNIO

/// Turns broadcasts whose expiration passed into an expired change in every member's feed with one row write per
/// broadcast, whatever its audience: the broadcast takes the next number of its app's broadcast order (as a replace
/// does), so each member's next sync lists it again after its cursor's broadcast position, now expired, exactly once.
/// `expiry_listed` marks the broadcasts so numbered. The event it emits is a broadcast's (`eventSource` set), so
/// fanout streams the audience a background push, as it pushes a user's devices a notification's expiry.
struct BroadcastExpiry {
    let connection: PostgresConnection
    let logger: Logger

    /// Numbers up to `limit` broadcasts expired by `dueBy` and not numbered yet; answers their change events.
    func expireDue(by dueBy: Date, limit: Int = 1000) async throws -> [ChangeEvent] {
        // The app's counter row is locked before the broadcast rows (as a publish or replace does), so the two cannot
        // deadlock; a broadcast replaced or numbered meanwhile is checked again by the UPDATE (its number is then
        // unused: a gap a cursor passes over).
        let rows = try await connection.query(
            """
            WITH due AS (
                SELECT notification_id AS id, app_id AS app FROM broadcasts
                WHERE NOT expiry_listed AND expires_at <= \(dueBy)
                ORDER BY expires_at LIMIT \(limit)
            ),
            allocated AS (
                INSERT INTO broadcast_sequences AS s (app_id, last_seq)
                SELECT app, count(*) FROM due GROUP BY app ORDER BY app
                ON CONFLICT (app_id) DO UPDATE SET last_seq = s.last_seq + EXCLUDED.last_seq
                RETURNING app_id, last_seq
            ),
            numbered AS (
                SELECT d.id, a.last_seq - count(*) OVER by_app + row_number() OVER (by_app ORDER BY d.id) AS seq
                FROM due d JOIN allocated a ON a.app_id = d.app
                WINDOW by_app AS (PARTITION BY d.app)
            )
            UPDATE broadcasts b SET seq = n.seq, expiry_listed = true, updated_at = \(dueBy)
            FROM numbered n
            WHERE b.notification_id = n.id AND NOT b.expiry_listed AND b.expires_at <= \(dueBy)
            RETURNING b.notification_id, b.app_id, b.event_source
            """, logger: logger)
        var events: [ChangeEvent] = []
        for try await (id, appId, eventSource) in rows.decode((UUID, String, String).self) {
            events.append(ChangeEvent(
                appId: appId, userId: "", sequence: 0, kind: .expired, notificationId: id, content: nil, readState: .unread,
                userActionState: .noInteraction, originSubscriptionId: nil, badge: nil, changedAt: dueBy, eventSource: eventSource))
        }
        if !events.isEmpty { logger.info("expired broadcasts", metadata: ["count": "\(events.count)"]) }
        return events
    }
}
