import Foundation
import Logging
import NotifyModels
import PostgresNIO

/// Applies a batch of storage commands in one transaction and returns the change events to emit.
///
/// Idempotency: every command id is claimed in `applied_commands` in the same transaction as its effect,
/// together with the JSON of the events it produced (an outbox). A command that was applied before is not
/// applied again; its stored events are emitted again instead, because the earlier attempt may have
/// committed and then died before the events reached the broker. Re-emitted events are harmless:
/// pushes carry deterministic ids and collapse ids.
struct CommandBatchApplier: Sendable {
    let client: PostgresClient
    let logger: Logger

    /// The JSON objects of the change events to emit, in command order.
    func apply(_ commands: [StorageCommand]) async throws -> [String] {
        try await client.withTransaction(logger: logger) { connection in
            try await apply(commands, on: connection)
        }
    }

    private func apply(_ commands: [StorageCommand], on connection: PostgresConnection) async throws -> [String] {
        let ids = commands.map(\.commandId)
        var fresh = Set<UUID>()
        let claimed = try await connection.query(
            """
            INSERT INTO applied_commands (command_id, applied_at)
            SELECT id, now() FROM unnest(\(ids)::uuid[]) AS t(id)
            ON CONFLICT (command_id) DO NOTHING
            RETURNING command_id
            """, logger: logger)
        for try await id in claimed.decode(UUID.self) { fresh.insert(id) }

        var eventsByCommand: [UUID: String] = [:]
        let repeats = ids.filter { !fresh.contains($0) }
        if !repeats.isEmpty {
            logger.debug("redelivered commands; emitting their events again", metadata: ["count": "\(repeats.count)"])
            let rows = try await connection.query(
                "SELECT command_id, events FROM applied_commands WHERE command_id = ANY(\(repeats)::uuid[]) AND events IS NOT NULL",
                logger: logger)
            for try await (id, events) in rows.decode((UUID, String).self) { eventsByCommand[id] = events }
        }

        let writer = NotificationChangeWriter(connection: connection, logger: logger)
        var produced: [NotificationChangeWriter.Produced] = []
        var segment: [(commandId: UUID, effect: NotificationChangeWriter.Effect)] = []
        var touched = Set<UUID>()
        func flush() async throws {
            produced += try await writer.apply(segment)
            segment = []
            touched = []
        }
        for command in commands where fresh.contains(command.commandId) {
            let effect: NotificationChangeWriter.Effect
            switch command.action {
            case .publishNotification(let notification):
                effect = .publish(notification)
            case .changeNotificationState(let change):
                effect = .change(change)
            case .expireDueNotifications(let dueBy):
                try await flush()
                produced += try await writer.expireDue(by: dueBy, commandId: command.commandId)
                continue
            case .publishBroadcast(let broadcast):
                produced.append(try await writer.broadcast(broadcast, commandId: command.commandId))
                continue
            case .purgeTombstones(let olderThan):
                try await TombstonePurger(connection: connection, logger: logger).purge(olderThan: olderThan)
                continue
            default:
                try await RegistryWriter(connection: connection, logger: logger).apply(command.action)
                continue
            }
            let notificationId = effect.notificationId
            if touched.contains(notificationId) { try await flush() }
            touched.insert(notificationId)
            segment.append((command.commandId, effect))
        }
        try await flush()

        try await fillUnreadCounts(&produced, on: connection)
        let encoder = WireCoding.makeEncoder()
        var commandIds: [UUID] = []
        var outbox: [String] = []
        for item in produced where !item.events.isEmpty {
            let json = try item.events.map { String(decoding: try encoder.encode($0), as: UTF8.self) }.joined(separator: ",")
            eventsByCommand[item.commandId] = json
            commandIds.append(item.commandId)
            outbox.append(json)
        }
        if !commandIds.isEmpty {
            try await connection.query(
                """
                UPDATE applied_commands SET events = v.events
                FROM unnest(\(commandIds)::uuid[], \(outbox)::text[]) AS v(id, events)
                WHERE applied_commands.command_id = v.id
                """, logger: logger)
        }
        return ids.compactMap { eventsByCommand[$0] }
    }

    /// Every event carries its user's unread count once the whole batch is applied (the badge).
    private func fillUnreadCounts(_ produced: inout [NotificationChangeWriter.Produced], on connection: PostgresConnection) async throws {
        let events = produced.flatMap(\.events).filter { $0.eventSource == nil }
        guard !events.isEmpty else { return }
        let unread = try await UnreadCounter(logger: logger).counts(appIds: events.map(\.appId), userIds: events.map(\.userId), on: connection)
        for index in produced.indices {
            for eventIndex in produced[index].events.indices {
                let event = produced[index].events[eventIndex]
                guard event.eventSource == nil else { continue }
                produced[index].events[eventIndex].unreadCount = unread[UserKey(appId: event.appId, userId: event.userId)] ?? 0
            }
        }
    }
}

extension NotificationChangeWriter.Effect {
    var notificationId: UUID {
        switch self {
        case .publish(let notification): return notification.notificationId
        case .change(let change): return change.notificationId
        }
    }
}

/// A user of an app: the scope of a change sequence and a badge.
struct UserKey: Hashable, Sendable {
    var appId: String
    var userId: String
}
