import Foundation
import Logging
import NotifyDatabase
import NotifyModels
import PostgresNIO

/// When a user's devices leave an event source (a device leaves or is unregistered, the app server removes the user,
/// the source is deleted, the device's token passes to another user), the source's broadcasts published before the
/// user's earliest remaining membership of it leave the user's feed (`user_broadcasts`). Each such broadcast the user
/// had not deleted gets a `removed` change, numbered in the user's sequence and logged like a deletion, so every device
/// of the user drops its copy at its next sync. Written once per user and broadcast leaving the feed: nothing is
/// written for the members who stay.
struct BroadcastRemoval {
    /// A membership that ended: a device of `userId` that had joined `eventSource` at `joinedAt`.
    struct EndedMembership: Sendable, Equatable {
        var appId: String
        var userId: String
        var eventSource: String
        var joinedAt: Date
    }

    let connection: PostgresConnection
    let logger: Logger

    /// Logs the removals the `ended` memberships caused (read after they were deleted) and answers their change events.
    func write(_ ended: [EndedMembership], at: Date) async throws -> [ChangeEvent] {
        guard !ended.isEmpty else { return [] }
        let rows = try await connection.query(
            """
            WITH input AS (
                SELECT * FROM unnest(
                    \(ArrayParameter(ended.map(\.appId)))::text[], \(ArrayParameter(ended.map(\.userId)))::text[],
                    \(ArrayParameter(ended.map(\.eventSource)))::text[], \(ArrayParameter(ended.map(\.joinedAt)))::timestamptz[]
                ) AS t(app, usr, source, joined)
            ),
            -- Per user and source: the earliest ended membership, and the earliest one left (none: the user left it).
            ended AS (
                SELECT i.app, i.usr, i.source, min(i.joined) AS joined,
                       (SELECT min(m.joined_at) FROM subscriptions s JOIN event_source_members m ON m.subscription_id = s.subscription_id
                        WHERE s.app_id = i.app AND s.user_id = i.usr AND m.app_id = i.app AND m.event_source = i.source) AS still
                FROM input i GROUP BY i.app, i.usr, i.source
            ),
            removing AS (
                SELECT e.app, e.usr, b.notification_id AS id, \(at)::timestamptz AS at,
                       row_number() OVER (ORDER BY e.app, e.usr, b.seq) AS ord
                FROM ended e JOIN broadcasts b ON b.app_id = e.app AND b.event_source = e.source AND b.created_at >= e.joined
                WHERE (e.still IS NULL OR b.created_at < e.still)
                  AND NOT EXISTS (
                      SELECT 1 FROM broadcast_states t
                      WHERE t.app_id = e.app AND t.user_id = e.usr AND t.notification_id = b.notification_id AND t.status = 'deleted')
            ),
            \(unescaped: ChangeSequencing.numbering(from: "removing")),
            \(unescaped: ChangeSequencing.logging(from: "numbered", kind: ChangeSequencing.literal(.removed)))
            SELECT app, usr, id, seq FROM numbered ORDER BY ord
            """, logger: logger)
        var events: [ChangeEvent] = []
        for try await (appId, userId, id, sequence) in rows.decode((String, String, UUID, Int64).self) {
            events.append(ChangeEvent(
                appId: appId, userId: userId, sequence: sequence, kind: .removed, notificationId: id, content: nil, readState: .unread,
                userActionState: .noInteraction, originSubscriptionId: nil, badge: nil, changedAt: at))
        }
        if !events.isEmpty { logger.debug("broadcasts removed from feeds", metadata: ["count": "\(events.count)"]) }
        return events
    }
}
