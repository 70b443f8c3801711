import Foundation
import Logging
import NotifyDatabase
import NotifyModels
import PostgresNIO

/// Writes changes to notifications (publish or replace, state change, delete, expire) with each user's
/// next sequence numbers, the rows of the `changes` log, and the change events to emit: one statement
/// (one round trip) for each kind of change in a segment.
///
/// Callers hand over *segments* in which every notification appears at most once, so the multi-row
/// statements below never touch a row twice and the effects land in command order.
struct NotificationChangeWriter {
    /// One effect of one command.
    enum Effect {
        case publish(PublishedNotification)
        case change(NotificationStateChange)
    }

    /// The change events, as JSON, of one command.
    struct Produced {
        var commandId: UUID
        var events: [ChangeEvent]
    }

    let connection: PostgresConnection
    let logger: Logger

    func apply(_ effects: [(commandId: UUID, effect: Effect)]) async throws -> [Produced] {
        var publishes: [(commandId: UUID, notification: PublishedNotification)] = []
        var changes: [(commandId: UUID, change: NotificationStateChange)] = []
        for (commandId, effect) in effects {
            switch effect {
            case .publish(let notification): publishes.append((commandId, notification))
            case .change(let change): changes.append((commandId, change))
            }
        }
        return try await writePublishes(publishes) + writeStateChanges(changes)
    }

    /// Expires up to `limit` active notifications whose expiration passed and up to `limit` broadcasts
    /// (`BroadcastExpiry`), and writes a share of the broadcast removals left to the sweep (`BroadcastRemoval`): the
    /// events of the command `commandId`.
    func expireDue(by dueBy: Date, commandId: UUID, limit: Int = 1000) async throws -> [Produced] {
        let rows = try await connection.query(
            """
            WITH due AS (
                SELECT notification_id AS id, app_id AS app, user_id AS usr FROM notifications
                WHERE status = 'active' AND expires_at <= \(dueBy)
                ORDER BY expires_at LIMIT \(limit) FOR UPDATE SKIP LOCKED
            ),
            expiring AS (SELECT due.*, row_number() OVER () AS ord, \(dueBy)::timestamptz AS at FROM due),
            \(unescaped: ChangeSequencing.numbering(from: "expiring")),
            updated AS (
                UPDATE notifications AS n SET status = 'expired', sequence = v.seq, updated_at = v.at
                FROM numbered v WHERE n.notification_id = v.id
                RETURNING n.notification_id, n.app_id, n.user_id, n.sequence, n.read_state, n.user_action_state
            ),
            \(unescaped: ChangeSequencing.logging(from: "numbered", kind: ChangeSequencing.literal(.expired)))
            SELECT * FROM updated
            """, logger: logger)
        var events: [ChangeEvent] = []
        for try await (id, appId, userId, sequence, readState, actionState) in rows.decode((UUID, String, String, Int64, String, String).self) {
            events.append(ChangeEvent(
                appId: appId, userId: userId, sequence: sequence, kind: .expired, notificationId: id, content: nil,
                readState: ReadState(rawValue: readState) ?? .unread, userActionState: UserActionState(rawValue: actionState) ?? .noInteraction,
                originSubscriptionId: nil, badge: nil, changedAt: dueBy))
        }
        if !events.isEmpty { logger.info("expired notifications", metadata: ["count": "\(events.count)"]) }
        events += try await BroadcastExpiry(connection: connection, logger: logger).expireDue(by: dueBy, limit: limit)
        events += try await BroadcastRemoval(connection: connection, logger: logger).writePending()
        return events.isEmpty ? [] : [Produced(commandId: commandId, events: events)]
    }

    /// Stores a notification for an event source's subscribers: one row, whatever the audience, numbered in the app's
    /// broadcast order (a replace takes a new number, so devices that synced it see it again). Member users see it in
    /// their feeds (`user_broadcasts`); fanout streams the audience.
    func broadcast(_ broadcast: PublishedBroadcast, commandId: UUID) async throws -> Produced {
        let content = broadcast.content.encodedJSONString()
        let recipientPush = try broadcast.recipientPush.map(JSONColumn.text)
        let memberFilter = try broadcast.memberFilter.map(JSONColumn.text)
        let rows = try await connection.query(
            """
            WITH numbered AS (
                INSERT INTO broadcast_sequences AS s (app_id, last_seq) VALUES (\(broadcast.appId), 1)
                ON CONFLICT (app_id) DO UPDATE SET last_seq = s.last_seq + 1
                RETURNING last_seq
            )
            INSERT INTO broadcasts (notification_id, app_id, event_source, content, created_at, updated_at, seq, expires_at, recipient_push, member_filter)
            SELECT \(broadcast.notificationId), \(broadcast.appId), \(broadcast.eventSource), \(content)::jsonb,
                   \(broadcast.receivedAt), \(broadcast.receivedAt), last_seq, \(broadcast.content.expirationDateTime), \(recipientPush)::jsonb,
                   \(memberFilter)::jsonb
            FROM numbered
            ON CONFLICT (notification_id) DO UPDATE SET
                content = EXCLUDED.content, updated_at = EXCLUDED.updated_at, seq = EXCLUDED.seq, expires_at = EXCLUDED.expires_at,
                recipient_push = EXCLUDED.recipient_push, member_filter = EXCLUDED.member_filter, expiry_listed = false
            RETURNING (xmax = 0)
            """, logger: logger)
        var created = true
        for try await isNew in rows.decode(Bool.self) { created = isNew }
        return Produced(commandId: commandId, events: [ChangeEvent(
            appId: broadcast.appId, userId: "", sequence: 0, kind: created ? .created : .updated, notificationId: broadcast.notificationId,
            content: broadcast.content, readState: .unread, userActionState: .noInteraction, originSubscriptionId: nil,
            badge: nil, changedAt: broadcast.receivedAt, eventSource: broadcast.eventSource, recipientPush: broadcast.recipientPush,
            memberFilter: broadcast.memberFilter)])
    }

    // MARK: Publish

    /// Stores (or replaces) the notifications with their sequence numbers and change-log rows, in one statement.
    private func writePublishes(_ publishes: [(commandId: UUID, notification: PublishedNotification)]) async throws -> [Produced] {
        guard !publishes.isEmpty else { return [] }
        var ids: [UUID] = [], appIds: [String] = [], userIds: [String] = [], appNotificationIds: [String] = []
        var contents: [String] = [], receivedAts: [Date] = [], expirations: [Date] = []
        for (_, notification) in publishes {
            ids.append(notification.notificationId)
            appIds.append(notification.appId)
            userIds.append(notification.userId)
            appNotificationIds.append(notification.content.appNotificationId ?? "")
            contents.append(notification.content.encodedJSONString())
            receivedAts.append(notification.receivedAt)
            expirations.append(notification.content.expirationDateTime)
        }
        let statement = PublishStatement(
            ids: ArrayParameter(ids), appIds: ArrayParameter(appIds), userIds: ArrayParameter(userIds),
            appNotificationIds: ArrayParameter(appNotificationIds), contents: ArrayParameter(contents),
            receivedAts: ArrayParameter(receivedAts), expirations: ArrayParameter(expirations))
        let rows = try await connection.execute(statement, logger: logger)
        var stored = [(sequence: Int64, created: Bool)?](repeating: nil, count: publishes.count)
        for try await (ord, sequence, created) in rows {
            stored[Int(ord) - 1] = (sequence, created)
        }
        var produced: [Produced] = []
        produced.reserveCapacity(publishes.count)
        for (index, (commandId, notification)) in publishes.enumerated() {
            guard let (sequence, created) = stored[index] else { throw MissingRow(notificationId: notification.notificationId) }
            produced.append(Produced(commandId: commandId, events: [ChangeEvent(
                appId: notification.appId, userId: notification.userId, sequence: sequence,
                kind: created ? .created : .updated,
                notificationId: notification.notificationId, content: notification.content,
                readState: .unread, userActionState: .noInteraction, originSubscriptionId: nil,
                badge: nil, changedAt: notification.receivedAt, pushSubscriptionIds: notification.pushSubscriptionIds)]))
        }
        return produced
    }

    /// Stores (or replaces) notifications, numbers their changes and logs them. Prepared once per connection:
    /// PostgreSQL then neither parses nor plans it again (planning was about 30 % of its statement time at
    /// 1,000 notifications/s, `pg_stat_statements`; docs/benchmarks-history.md, "2026-11-23, f74dec3").
    struct PublishStatement: PostgresPreparedStatement {
        static let sql = """
            WITH input AS (
                SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::timestamptz[])
                     WITH ORDINALITY AS t(id, app, usr, anid, content, at, expires, ord)
            ),
            \(ChangeSequencing.numbering(from: "input")),
            -- Whether each is new, from the statement's snapshot (storage applies one batch at a time). No join
            -- of two CTEs below: their sizes are unknown to a generic plan, which may then nest one loop in another.
            published AS (
                SELECT numbered.*, NOT EXISTS (SELECT 1 FROM notifications n WHERE n.notification_id = numbered.id) AS created FROM numbered
            ),
            stored AS (
                INSERT INTO notifications (notification_id, app_id, user_id, app_notification_id, content, sequence, created_at, updated_at, expires_at)
                SELECT id, app, usr, NULLIF(anid, ''), content::jsonb, seq, at, at, expires FROM published
                ON CONFLICT (notification_id) DO UPDATE SET
                    content = EXCLUDED.content, sequence = EXCLUDED.sequence, updated_at = EXCLUDED.updated_at,
                    expires_at = EXCLUDED.expires_at, status = 'active', read_state = 'unread', user_action_state = 'noInteraction'
            ),
            \(ChangeSequencing.logging(
                from: "published", kind: "CASE WHEN created THEN \(ChangeSequencing.literal(.created)) ELSE \(ChangeSequencing.literal(.updated)) END"))
            SELECT ord, seq, created FROM published
            """

        /// The input's position (from 1), the sequence number, and whether the notification is new.
        typealias Row = (Int64, Int64, Bool)

        var ids: ArrayParameter<UUID>
        var appIds: ArrayParameter<String>
        var userIds: ArrayParameter<String>
        /// "" for none.
        var appNotificationIds: ArrayParameter<String>
        /// JSON of `NotificationContent`.
        var contents: ArrayParameter<String>
        var receivedAts: ArrayParameter<Date>
        var expirations: ArrayParameter<Date>

        func makeBindings() -> PostgresBindings {
            PostgresBindings(ids, appIds, userIds, appNotificationIds, contents, receivedAts, expirations)
        }

        func decodeRow(_ row: PostgresRow) throws -> Row {
            try row.decode(Row.self)
        }
    }

    /// A statement did not return the row of a notification it wrote: the statement and this code disagree.
    struct MissingRow: Error, CustomStringConvertible {
        var notificationId: UUID
        var description: String { "the write of notification \(notificationId.lowercasedString) returned no row" }
    }

    // MARK: State changes and deletions

    /// Applies the changes whose notification exists, belongs to the user, is still active (locked for this
    /// transaction), and would change something: setting a state it already has is not a change (so a retried
    /// PATCH is harmless). One statement: lock, filter, number, update, log.
    private func writeStateChanges(_ changes: [(commandId: UUID, change: NotificationStateChange)]) async throws -> [Produced] {
        guard !changes.isEmpty else { return [] }
        let rows = try await connection.query(Self.stateChangeStatement(changes.map(\.change), """
            -- The notifications this would change, locked (and, if another transaction changed one meanwhile, checked
            -- again in its new version) in one scan: no join of two CTEs, whose sizes a plan cannot know.
            applicable AS (
                SELECT i.* FROM input i JOIN notifications n ON n.notification_id = i.id
                WHERE n.app_id = i.app AND n.user_id = i.usr AND n.status = 'active'
                  AND (i.del OR (i.rs <> '' AND i.rs <> n.read_state) OR (i.uas <> '' AND i.uas <> n.user_action_state))
                ORDER BY i.id
                FOR UPDATE OF n
            ),
            \(ChangeSequencing.numbering(from: "applicable")),
            updated AS (
                UPDATE notifications AS n SET
                    read_state = COALESCE(NULLIF(v.rs, ''), n.read_state),
                    user_action_state = COALESCE(NULLIF(v.uas, ''), n.user_action_state),
                    status = CASE WHEN v.del THEN 'deleted' ELSE n.status END,
                    sequence = v.seq, updated_at = v.at
                FROM numbered v WHERE n.notification_id = v.id
                RETURNING v.ord, v.seq, n.read_state, n.user_action_state
            ),
            \(ChangeSequencing.logging(
                from: "numbered", kind: "CASE WHEN del THEN \(ChangeSequencing.literal(.deleted)) ELSE \(ChangeSequencing.literal(.stateChanged)) END"))
            SELECT * FROM updated ORDER BY ord
            """), logger: logger)
        var produced: [Produced] = []
        var applied = Set<Int>()
        for try await (ord, sequence, readState, actionState) in rows.decode((Int64, Int64, String, String).self) {
            applied.insert(Int(ord) - 1)
            produced.append(Self.produced(changes[Int(ord) - 1], sequence: sequence, readState: readState, actionState: actionState))
        }
        // What no notification took is a change to a broadcast in the user's feed, or changes nothing.
        let rest = changes.indices.filter { !applied.contains($0) }.map { changes[$0] }
        return try await produced + writeBroadcastStateChanges(rest)
    }

    /// A user's read, dismiss or delete of a broadcast in its feed: the user's own state row for it, numbered in the
    /// user's sequence and logged like a change to a notification, so the user's other devices sync it. Applies the
    /// changes whose broadcast is in the user's feed (`user_broadcasts`), not deleted for the user, and would change
    /// something.
    private func writeBroadcastStateChanges(_ changes: [(commandId: UUID, change: NotificationStateChange)]) async throws -> [Produced] {
        guard !changes.isEmpty else { return [] }
        let rows = try await connection.query(Self.stateChangeStatement(changes.map(\.change), """
            applicable AS (
                SELECT i.*, NULLIF(i.rs, '') AS new_rs, NULLIF(i.uas, '') AS new_uas,
                       coalesce(t.read_state, 'unread') AS cur_rs, coalesce(t.user_action_state, 'noInteraction') AS cur_uas
                FROM input i
                LEFT JOIN broadcast_states t ON t.app_id = i.app AND t.user_id = i.usr AND t.notification_id = i.id
                WHERE coalesce(t.status, 'active') = 'active'
                  AND (i.del OR (i.rs <> '' AND i.rs <> coalesce(t.read_state, 'unread'))
                       OR (i.uas <> '' AND i.uas <> coalesce(t.user_action_state, 'noInteraction')))
                  AND EXISTS (SELECT 1 FROM user_broadcasts(i.app, i.usr) b WHERE b.notification_id = i.id)
            ),
            \(ChangeSequencing.numbering(from: "applicable")),
            stated AS (
                SELECT numbered.*, coalesce(new_rs, cur_rs) AS rs_after, coalesce(new_uas, cur_uas) AS uas_after FROM numbered
            ),
            stored AS (
                INSERT INTO broadcast_states AS t (app_id, user_id, notification_id, read_state, user_action_state, status, sequence, updated_at)
                SELECT app, usr, id, rs_after, uas_after, CASE WHEN del THEN 'deleted' ELSE 'active' END, seq, at FROM stated
                ON CONFLICT (app_id, user_id, notification_id) DO UPDATE SET
                    read_state = EXCLUDED.read_state, user_action_state = EXCLUDED.user_action_state, status = EXCLUDED.status,
                    sequence = EXCLUDED.sequence, updated_at = EXCLUDED.updated_at
            ),
            \(ChangeSequencing.logging(
                from: "numbered", kind: "CASE WHEN del THEN \(ChangeSequencing.literal(.deleted)) ELSE \(ChangeSequencing.literal(.stateChanged)) END"))
            SELECT ord, seq, rs_after, uas_after FROM stated ORDER BY ord
            """), logger: logger)
        var produced: [Produced] = []
        for try await (ord, sequence, readState, actionState) in rows.decode((Int64, Int64, String, String).self) {
            produced.append(Self.produced(changes[Int(ord) - 1], sequence: sequence, readState: readState, actionState: actionState))
        }
        return produced
    }

    /// A state-change statement: `rest` (CTEs, then the final SELECT) after the CTE `input`, the changes as rows
    /// (columns `id`, `app`, `usr`, `rs`, `uas`, `del`, `at` and `ord`, the position from 1; "" for a state left as it is).
    private static func stateChangeStatement(_ changes: [NotificationStateChange], _ rest: String) -> PostgresQuery {
        var bindings = PostgresBindings()
        bindings.append(ArrayParameter(changes.map(\.notificationId)))
        bindings.append(ArrayParameter(changes.map(\.appId)))
        bindings.append(ArrayParameter(changes.map(\.userId)))
        bindings.append(ArrayParameter(changes.map { $0.readState?.rawValue ?? "" }))
        bindings.append(ArrayParameter(changes.map { $0.userActionState?.rawValue ?? "" }))
        bindings.append(ArrayParameter(changes.map(\.delete)))
        bindings.append(ArrayParameter(changes.map(\.requestedAt)))
        return PostgresQuery(unsafeSQL: """
            WITH input AS (
                SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bool[], $7::timestamptz[])
                     WITH ORDINALITY AS t(id, app, usr, rs, uas, del, at, ord)
            ),
            \(rest)
            """, binds: bindings)
    }

    private static func produced(
        _ entry: (commandId: UUID, change: NotificationStateChange), sequence: Int64, readState: String, actionState: String
    ) -> Produced {
        let change = entry.change
        return Produced(commandId: entry.commandId, events: [ChangeEvent(
            appId: change.appId, userId: change.userId, sequence: sequence,
            kind: change.delete ? .deleted : .stateChanged, notificationId: change.notificationId, content: nil,
            readState: ReadState(rawValue: readState) ?? .unread, userActionState: UserActionState(rawValue: actionState) ?? .noInteraction,
            originSubscriptionId: change.originSubscriptionId, badge: nil, changedAt: change.requestedAt)])
    }
}
