import Foundation
import Logging
import NotifyDatabase
import NotifyModels
import PostgresNIO

/// Writes changes to notifications (publish or replace, state change, delete, expire) with each user's
/// next sequence numbers, the rows of the `changes` log, and the change events to emit.
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
        let applicable = try await applicableChanges(changes)
        let users = publishes.map { UserKey(appId: $0.notification.appId, userId: $0.notification.userId) }
            + applicable.map { UserKey(appId: $0.change.appId, userId: $0.change.userId) }
        let sequences = try await SequenceAllocator(logger: logger).allocate(for: users, on: connection)
        var produced = try await writePublishes(publishes, sequences: Array(sequences.prefix(publishes.count)))
        produced += try await writeStateChanges(applicable, sequences: Array(sequences.dropFirst(publishes.count)))
        return produced
    }

    /// Expires up to `limit` active notifications whose expiration passed.
    func expireDue(by dueBy: Date, commandId: UUID, limit: Int = 1000) async throws -> [Produced] {
        let rows = try await connection.query(
            """
            SELECT notification_id, app_id, user_id FROM notifications
            WHERE status = 'active' AND expires_at <= \(dueBy)
            ORDER BY expires_at LIMIT \(limit) FOR UPDATE SKIP LOCKED
            """, logger: logger)
        var due: [(id: UUID, user: UserKey)] = []
        for try await (id, appId, userId) in rows.decode((UUID, String, String).self) {
            due.append((id, UserKey(appId: appId, userId: userId)))
        }
        guard !due.isEmpty else { return [] }
        let sequences = try await SequenceAllocator(logger: logger).allocate(for: due.map(\.user), on: connection)
        let ids = due.map(\.id)
        let updated = try await connection.query(
            """
            UPDATE notifications AS n SET status = 'expired', sequence = v.seq, updated_at = \(dueBy)
            FROM unnest(\(ArrayParameter(ids))::uuid[], \(ArrayParameter(sequences))::int8[]) AS v(id, seq)
            WHERE n.notification_id = v.id
            RETURNING n.notification_id, n.app_id, n.user_id, n.sequence, n.read_state, n.user_action_state
            """, logger: logger)
        var events: [ChangeEvent] = []
        for try await (id, appId, userId, sequence, readState, actionState) in updated.decode((UUID, String, String, Int64, String, String).self) {
            events.append(ChangeEvent(
                appId: appId, userId: userId, sequence: sequence, kind: .expired, notificationId: id, content: nil,
                readState: ReadState(rawValue: readState) ?? .unread, userActionState: UserActionState(rawValue: actionState) ?? .noInteraction,
                originSubscriptionId: nil, unreadCount: 0, changedAt: dueBy))
        }
        try await logChanges(events)
        logger.info("expired notifications", metadata: ["count": "\(events.count)"])
        return [Produced(commandId: commandId, events: events)]
    }

    /// Stores a notification for an event source's subscribers. Broadcasts are not part of any user's
    /// change log (one row, whatever the audience); fanout streams the audience.
    func broadcast(_ broadcast: PublishedBroadcast, commandId: UUID) async throws -> Produced {
        let content = broadcast.content.encodedJSONString()
        let rows = try await connection.query(
            """
            INSERT INTO broadcasts (notification_id, app_id, event_source, content, created_at, updated_at)
            VALUES (\(broadcast.notificationId), \(broadcast.appId), \(broadcast.eventSource), \(content)::jsonb, \(broadcast.receivedAt), \(broadcast.receivedAt))
            ON CONFLICT (notification_id) DO UPDATE SET content = EXCLUDED.content, updated_at = EXCLUDED.updated_at
            RETURNING (xmax = 0)
            """, logger: logger)
        var created = true
        for try await isNew in rows.decode(Bool.self) { created = isNew }
        return Produced(commandId: commandId, events: [ChangeEvent(
            appId: broadcast.appId, userId: "", sequence: 0, kind: created ? .created : .updated, notificationId: broadcast.notificationId,
            content: broadcast.content, readState: .unread, userActionState: .noInteraction, originSubscriptionId: nil,
            unreadCount: 0, changedAt: broadcast.receivedAt, eventSource: broadcast.eventSource)])
    }

    // MARK: Publish

    private func writePublishes(_ publishes: [(commandId: UUID, notification: PublishedNotification)], sequences: [Int64]) async throws -> [Produced] {
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
        var created = Set<UUID>()
        let upserted = try await connection.query(
            """
            INSERT INTO notifications (notification_id, app_id, user_id, app_notification_id, content, sequence, created_at, updated_at, expires_at)
            SELECT id, app, usr, NULLIF(anid, ''), content::jsonb, seq, received, received, expires
            FROM unnest(\(ArrayParameter(ids))::uuid[], \(ArrayParameter(appIds))::text[], \(ArrayParameter(userIds))::text[], \(ArrayParameter(appNotificationIds))::text[],
                        \(ArrayParameter(contents))::text[], \(ArrayParameter(sequences))::int8[], \(ArrayParameter(receivedAts))::timestamptz[], \(ArrayParameter(expirations))::timestamptz[])
                 AS t(id, app, usr, anid, content, seq, received, expires)
            ON CONFLICT (notification_id) DO UPDATE SET
                content = EXCLUDED.content, sequence = EXCLUDED.sequence, updated_at = EXCLUDED.updated_at,
                expires_at = EXCLUDED.expires_at, status = 'active', read_state = 'unread', user_action_state = 'noInteraction'
            RETURNING notification_id, (xmax = 0)
            """, logger: logger)
        for try await (id, isNew) in upserted.decode((UUID, Bool).self) where isNew { created.insert(id) }

        var produced: [Produced] = []
        produced.reserveCapacity(publishes.count)
        for (index, (commandId, notification)) in publishes.enumerated() {
            produced.append(Produced(commandId: commandId, events: [ChangeEvent(
                appId: notification.appId, userId: notification.userId, sequence: sequences[index],
                kind: created.contains(notification.notificationId) ? .created : .updated,
                notificationId: notification.notificationId, content: notification.content,
                readState: .unread, userActionState: .noInteraction, originSubscriptionId: nil,
                unreadCount: 0, changedAt: notification.receivedAt)]))
        }
        try await logChanges(produced.flatMap(\.events))
        return produced
    }

    // MARK: State changes and deletions

    /// The changes whose notification exists, belongs to the user, is still active (locked for this transaction),
    /// and would change something: setting a state it already has is not a change (so a retried PATCH is harmless).
    private func applicableChanges(_ changes: [(commandId: UUID, change: NotificationStateChange)]) async throws -> [(commandId: UUID, change: NotificationStateChange)] {
        guard !changes.isEmpty else { return [] }
        let ids = changes.map(\.change.notificationId)
        var current: [UUID: (owner: UserKey, readState: String, actionState: String)] = [:]
        let rows = try await connection.query(
            """
            SELECT notification_id, app_id, user_id, read_state, user_action_state FROM notifications
            WHERE notification_id = ANY(\(ArrayParameter(ids))::uuid[]) AND status = 'active' FOR UPDATE
            """, logger: logger)
        for try await (id, appId, userId, readState, actionState) in rows.decode((UUID, String, String, String, String).self) {
            current[id] = (UserKey(appId: appId, userId: userId), readState, actionState)
        }
        return changes.filter { item in
            let change = item.change
            guard let now = current[change.notificationId], now.owner == UserKey(appId: change.appId, userId: change.userId) else { return false }
            return change.delete
                || (change.readState.map { $0.rawValue != now.readState } ?? false)
                || (change.userActionState.map { $0.rawValue != now.actionState } ?? false)
        }
    }

    private func writeStateChanges(_ changes: [(commandId: UUID, change: NotificationStateChange)], sequences: [Int64]) async throws -> [Produced] {
        guard !changes.isEmpty else { return [] }
        let ids = changes.map(\.change.notificationId)
        let readStates = changes.map { $0.change.readState?.rawValue ?? "" }
        let actionStates = changes.map { $0.change.userActionState?.rawValue ?? "" }
        let deletes = changes.map(\.change.delete)
        let times = changes.map(\.change.requestedAt)
        var states: [UUID: (ReadState, UserActionState)] = [:]
        let updated = try await connection.query(
            """
            UPDATE notifications AS n SET
                read_state = COALESCE(NULLIF(v.rs, ''), n.read_state),
                user_action_state = COALESCE(NULLIF(v.uas, ''), n.user_action_state),
                status = CASE WHEN v.del THEN 'deleted' ELSE n.status END,
                sequence = v.seq, updated_at = v.at
            FROM unnest(\(ArrayParameter(ids))::uuid[], \(ArrayParameter(readStates))::text[], \(ArrayParameter(actionStates))::text[], \(ArrayParameter(deletes))::bool[], \(ArrayParameter(sequences))::int8[], \(ArrayParameter(times))::timestamptz[])
                 AS v(id, rs, uas, del, seq, at)
            WHERE n.notification_id = v.id
            RETURNING n.notification_id, n.read_state, n.user_action_state
            """, logger: logger)
        for try await (id, readState, actionState) in updated.decode((UUID, String, String).self) {
            states[id] = (ReadState(rawValue: readState) ?? .unread, UserActionState(rawValue: actionState) ?? .noInteraction)
        }
        var produced: [Produced] = []
        for (index, (commandId, change)) in changes.enumerated() {
            let state = states[change.notificationId] ?? (.unread, .noInteraction)
            produced.append(Produced(commandId: commandId, events: [ChangeEvent(
                appId: change.appId, userId: change.userId, sequence: sequences[index],
                kind: change.delete ? .deleted : .stateChanged, notificationId: change.notificationId, content: nil,
                readState: state.0, userActionState: state.1, originSubscriptionId: change.originSubscriptionId,
                unreadCount: 0, changedAt: change.requestedAt)]))
        }
        try await logChanges(produced.flatMap(\.events))
        return produced
    }

    // MARK: The change log

    private func logChanges(_ events: [ChangeEvent]) async throws {
        guard !events.isEmpty else { return }
        let appIds = events.map(\.appId), userIds = events.map(\.userId), sequences = events.map(\.sequence)
        let ids = events.map(\.notificationId), kinds = events.map(\.kind.rawValue), times = events.map(\.changedAt)
        try await connection.query(
            """
            INSERT INTO changes (app_id, user_id, sequence, notification_id, kind, changed_at)
            SELECT * FROM unnest(\(ArrayParameter(appIds))::text[], \(ArrayParameter(userIds))::text[], \(ArrayParameter(sequences))::int8[], \(ArrayParameter(ids))::uuid[], \(ArrayParameter(kinds))::text[], \(ArrayParameter(times))::timestamptz[])
            """, logger: logger)
    }
}
