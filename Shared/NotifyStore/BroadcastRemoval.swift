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
///
/// A leave of more than `immediateLimit` memberships at once (a source of many members deleted) would hold storage's
/// transaction for a row per member and broadcast (a million members and ten broadcasts: 108 s measured): its
/// memberships wait in `broadcast_removals_pending` instead, and the expiry sweep writes their removals
/// `pendingPerSweep` memberships at a time, each user's devices pushed once per share.
struct BroadcastRemoval {
    /// A membership that ended: a device of `userId` that had joined `eventSource` at `joinedAt`.
    struct EndedMembership: Sendable, Equatable {
        var appId: String
        var userId: String
        var eventSource: String
        var joinedAt: Date
    }

    static let immediateLimit = 1000
    static let pendingPerSweep = 10_000

    let connection: PostgresConnection
    let logger: Logger

    /// Logs the removals the `ended` memberships caused (read after they were deleted) and answers their change events,
    /// one per user and broadcast; over `immediateLimit` memberships, leaves them to the sweep and answers none.
    func write(_ ended: [EndedMembership], at: Date, immediateLimit: Int = Self.immediateLimit) async throws -> [ChangeEvent] {
        guard !ended.isEmpty else { return [] }
        var bindings = PostgresBindings()
        bindings.append(ArrayParameter(ended.map(\.appId)))
        bindings.append(ArrayParameter(ended.map(\.userId)))
        bindings.append(ArrayParameter(ended.map(\.eventSource)))
        bindings.append(ArrayParameter(ended.map(\.joinedAt)))
        bindings.append(at)
        guard ended.count <= immediateLimit else {
            try await connection.query(PostgresQuery(unsafeSQL: """
                INSERT INTO broadcast_removals_pending AS p (app_id, user_id, event_source, joined_at, ended_at)
                SELECT app, usr, source, min(joined), $5 FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[]) AS t(app, usr, source, joined)
                GROUP BY app, usr, source ORDER BY app, usr, source
                ON CONFLICT (app_id, user_id, event_source) DO UPDATE SET
                    joined_at = least(p.joined_at, EXCLUDED.joined_at), ended_at = greatest(p.ended_at, EXCLUDED.ended_at)
                """, binds: bindings), logger: logger)
            logger.info("broadcast removals left to the sweep", metadata: ["memberships": "\(ended.count)"])
            return []
        }
        return try await removals(PostgresQuery(unsafeSQL: Self.statement(input: """
            input AS (
                SELECT t.*, $5::timestamptz AS at FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[]) AS t(app, usr, source, joined)
            )
            """), binds: bindings), eachBroadcast: true)
    }

    /// Writes the removals of up to `limit` memberships left to the sweep; answers one change event per user (its last
    /// removal: a device that syncs to it has them all).
    func writePending(limit: Int = Self.pendingPerSweep) async throws -> [ChangeEvent] {
        var bindings = PostgresBindings()
        bindings.append(limit)
        return try await removals(PostgresQuery(unsafeSQL: Self.statement(input: """
            input AS (
                DELETE FROM broadcast_removals_pending
                WHERE (app_id, user_id, event_source) IN (
                    SELECT app_id, user_id, event_source FROM broadcast_removals_pending
                    ORDER BY app_id, user_id, event_source LIMIT $1 FOR UPDATE SKIP LOCKED)
                RETURNING app_id AS app, user_id AS usr, event_source AS source, joined_at AS joined, ended_at AS at
            )
            """), binds: bindings), eachBroadcast: false)
    }

    /// The statement that logs the removals of the memberships of the CTE `input` (columns `app`, `usr`, `source`,
    /// `joined`, `at`), answering each removal's app, user, broadcast, sequence and time in order.
    private static func statement(input: String) -> String {
        """
        WITH \(input),
        -- Per user and source: the earliest ended membership, and the earliest one left (none: the user left the source).
        ended AS (
            SELECT i.app, i.usr, i.source, min(i.joined) AS joined, max(i.at) AS at,
                   (SELECT min(m.joined_at) FROM subscriptions s JOIN event_source_members m ON m.subscription_id = s.subscription_id
                    WHERE s.app_id = i.app AND s.user_id = i.usr AND m.app_id = i.app AND m.event_source = i.source) AS still
            FROM input i GROUP BY i.app, i.usr, i.source
        ),
        removing AS (
            SELECT e.app, e.usr, b.notification_id AS id, e.at, row_number() OVER (ORDER BY e.app, e.usr, b.seq) AS ord
            FROM ended e JOIN broadcasts b ON b.app_id = e.app AND b.event_source = e.source AND b.created_at >= e.joined
            WHERE (e.still IS NULL OR b.created_at < e.still)
              AND NOT EXISTS (
                  SELECT 1 FROM broadcast_states t
                  WHERE t.app_id = e.app AND t.user_id = e.usr AND t.notification_id = b.notification_id AND t.status = 'deleted')
        ),
        \(ChangeSequencing.numbering(from: "removing")),
        \(ChangeSequencing.logging(from: "numbered", kind: ChangeSequencing.literal(.removed)))
        SELECT app, usr, id, seq, at FROM numbered ORDER BY ord
        """
    }

    /// Runs a removal statement; answers an event per removal (`eachBroadcast`) or per user, its last.
    private func removals(_ query: PostgresQuery, eachBroadcast: Bool) async throws -> [ChangeEvent] {
        var events: [ChangeEvent] = []
        for try await (appId, userId, id, sequence, at) in try await connection.query(query, logger: logger).decode((String, String, UUID, Int64, Date).self) {
            let event = ChangeEvent(
                appId: appId, userId: userId, sequence: sequence, kind: .removed, notificationId: id, content: nil, readState: .unread,
                userActionState: .noInteraction, originSubscriptionId: nil, badge: nil, changedAt: at)
            // Rows come in user order: a user's later removal replaces its earlier one.
            if !eachBroadcast, let last = events.last, last.appId == appId, last.userId == userId {
                events[events.count - 1] = event
            } else {
                events.append(event)
            }
        }
        if !events.isEmpty { logger.debug("broadcasts removed from feeds", metadata: ["events": "\(events.count)"]) }
        return events
    }
}
