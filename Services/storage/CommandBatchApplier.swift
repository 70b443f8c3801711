import Foundation
import Logging
import NotifyDatabase
import NotifyModels
import PostgresNIO

/// Applies a batch of storage commands in one transaction and returns the change events to emit.
///
/// Idempotency: every command id is recorded in `applied_commands` in the same transaction as its effect,
/// together with the JSON of the events it produced (an outbox). A command that was applied before is not
/// applied again; its stored events are emitted again instead, because the earlier attempt may have
/// committed and then died before the events reached the broker. Re-emitted events are harmless:
/// pushes carry deterministic ids and collapse ids. If another transaction records one of the same
/// commands first, this one rolls back with `ConcurrentApplication` and is retried.
struct CommandBatchApplier: Sendable {
    let client: PostgresClient
    let logger: Logger

    /// Another transaction applied one of the commands at the same time; retrying finds it applied.
    struct ConcurrentApplication: Error, CustomStringConvertible {
        var description: String { "another transaction applied the same command first" }
    }

    /// The JSON objects of the change events to emit, in command order.
    func apply(_ commands: [StorageCommand]) async throws -> [String] {
        try await client.withTransaction(logger: logger) { connection in
            try await apply(commands, on: connection)
        }
    }

    private func apply(_ commands: [StorageCommand], on connection: PostgresConnection) async throws -> [String] {
        // A command sent twice (e.g. a publisher's retry) may arrive twice in one batch: it counts once.
        var seen = Set<UUID>()
        let commands = commands.filter { seen.insert($0.commandId).inserted }
        let ids = commands.map(\.commandId)
        var applied = Set<UUID>()
        var eventsByCommand: [UUID: String] = [:]
        let earlier = try await connection.query(
            "SELECT command_id, events FROM applied_commands WHERE command_id = ANY(\(ArrayParameter(ids))::uuid[])", logger: logger)
        for try await (id, events) in earlier.decode((UUID, String?).self) {
            applied.insert(id)
            eventsByCommand[id] = events
        }
        if !applied.isEmpty {
            logger.debug("redelivered commands; emitting their events again", metadata: ["count": "\(applied.count)"])
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
        for command in commands where !applied.contains(command.commandId) {
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

        try await fillUserStates(&produced, on: connection)
        for item in produced where !item.events.isEmpty {
            eventsByCommand[item.commandId] = item.events.encodedJSONObjects()
        }
        let freshIds = ids.filter { !applied.contains($0) }
        if !freshIds.isEmpty {
            // "" stands for a command without events (PostgresNIO binds no NULL inside an array).
            let outbox = freshIds.map { eventsByCommand[$0] ?? "" }
            let recorded = try await connection.query(
                """
                INSERT INTO applied_commands (command_id, applied_at, events)
                SELECT id, now(), NULLIF(events, '') FROM unnest(\(ArrayParameter(freshIds))::uuid[], \(ArrayParameter(outbox))::text[]) AS t(id, events)
                ON CONFLICT (command_id) DO NOTHING
                RETURNING command_id
                """, logger: logger)
            var recordedCount = 0
            for try await _ in recorded.decode(UUID.self) { recordedCount += 1 }
            guard recordedCount == freshIds.count else { throw ConcurrentApplication() }
        }
        try await announce(commands.filter { !applied.contains($0.commandId) && $0.isAnnouncedWhenApplied }, on: connection)
        return ids.compactMap { eventsByCommand[$0] }
    }

    /// Tells the senders waiting for these commands (ingest's `AppliedCommandWatch`) that they are applied:
    /// PostgreSQL delivers the notification when this transaction commits, so what they read next shows it.
    private func announce(_ commands: [StorageCommand], on connection: PostgresConnection) async throws {
        // A payload holds at most 8,000 bytes: 200 ids of 37.
        for start in stride(from: 0, to: commands.count, by: 200) {
            let ids = commands[start..<min(start + 200, commands.count)].map(\.commandId.lowercasedString).joined(separator: ",")
            try await connection.query("SELECT pg_notify(\(StorageCommand.appliedChannel), \(ids))", logger: logger)
        }
    }

    /// Every event carries its user's unread count (the badge) and devices version as of the whole batch applied.
    private func fillUserStates(_ produced: inout [NotificationChangeWriter.Produced], on connection: PostgresConnection) async throws {
        let events = produced.flatMap(\.events).filter { $0.eventSource == nil }
        guard !events.isEmpty else { return }
        let states = try await UserStateReader(logger: logger).states(appIds: events.map(\.appId), userIds: events.map(\.userId), on: connection)
        for index in produced.indices {
            for eventIndex in produced[index].events.indices {
                let event = produced[index].events[eventIndex]
                guard event.eventSource == nil else { continue }
                let state = states[UserKey(appId: event.appId, userId: event.userId)]
                produced[index].events[eventIndex].unreadCount = state?.unreadCount ?? 0
                produced[index].events[eventIndex].devicesVersion = state?.devicesVersion ?? 0
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
