import Foundation
import Logging
import NotifyDatabase
import NotifyModels
import NotifyWire
import PostgresNIO

/// Applies a batch of storage commands in one transaction and returns the change events to emit.
///
/// Idempotency: every command id is recorded in `applied_commands` in the same transaction as its effect,
/// together with the wire form of the events it produced (an outbox: `[ChangeEvent].wireFragment()`). A command that was applied before is not
/// applied again; its stored events are emitted again instead, because the earlier attempt may have
/// committed and then died before the events reached the broker. Re-emitted events are harmless:
/// pushes carry deterministic ids and collapse ids. Once the broker confirmed a command's events, they are
/// cleared from the outbox (`ConfirmedOutbox`, `clearing` here), and a retry of the command emits nothing.
///
/// Redeliveries are rare (a crash between commit and ack), so a batch is first applied without looking
/// for earlier applications: four round trips (the writes, the badges, the record, the commit) after BEGIN.
/// If the record then finds one of the commands applied before, that transaction rolls back and the
/// batch is applied again, this time reading the earlier records first. (Applying a command again cannot
/// fail where its first application succeeded: every write is an upsert or skips what is already so.)
/// If another transaction records one of the same commands at the same time, the second attempt rolls
/// back with `ConcurrentApplication` and is retried.
///
/// A publish made from a polled item is applied only when the item is new or changed (`PollItemLedger`), whatever
/// became of its command's record: the record is purged after a while, the ledger is kept while the source exists.
///
/// The transaction runs on its connection's event loop (`withTransactionOnEventLoop`): each reply resumes the batch's
/// code on the thread that read it.
public struct CommandBatchApplier: Sendable {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Another transaction applied one of the commands at the same time; retrying finds it applied.
    struct ConcurrentApplication: Error, CustomStringConvertible {
        var description: String { "another transaction applied the same command first" }
    }

    /// The first attempt met a command applied before: the batch is applied again with the earlier records read.
    private struct AppliedBefore: Error {}

    /// The change events to emit: a wire fragment for each command that has events, in command order. `clearing`:
    /// commands whose events the broker confirmed earlier, cleared from the outbox in the same transaction.
    public func apply(_ commands: [StorageCommand], clearing: [UUID] = []) async throws -> [(commandId: UUID, events: Data)] {
        // A command sent twice (e.g. a publisher's retry) may arrive twice in one batch: it counts once.
        var seen = Set<UUID>()
        let commands = commands.filter { seen.insert($0.commandId).inserted }
        do {
            return try await client.withTransactionOnEventLoop(logger: logger) { connection in
                try await apply(commands, earlier: nil, clearing: clearing, on: connection)
            }
        } catch let error as PostgresTransactionError where error.closureError is AppliedBefore {
            return try await client.withTransactionOnEventLoop(logger: logger) { connection in
                try await apply(
                    commands, earlier: try await earlierEvents(of: commands.map(\.commandId), on: connection), clearing: clearing, on: connection)
            }
        }
    }

    /// The commands of `ids` applied before, with the wire fragment of their events (empty for none).
    private func earlierEvents(of ids: [UUID], on connection: PostgresConnection) async throws -> [UUID: Data] {
        var events: [UUID: Data] = [:]
        let rows = try await connection.query(
            "SELECT command_id, wire_events FROM applied_commands WHERE command_id = ANY(\(ArrayParameter(ids))::uuid[])", logger: logger)
        for try await (id, fragment) in rows.decode((UUID, ByteBuffer?).self) { events[id] = fragment.map { Data($0.readableBytesView) } ?? Data() }
        logger.debug("redelivered commands; emitting their events again", metadata: ["count": "\(events.count)"])
        return events
    }

    /// `earlier`: the commands applied before and their events, or nil on a first attempt, which assumes none.
    private func apply(
        _ commands: [StorageCommand], earlier: [UUID: Data]?, clearing: [UUID], on connection: PostgresConnection
    ) async throws -> [(commandId: UUID, events: Data)] {
        let fresh = commands.filter { earlier?[$0.commandId] == nil }
        // Polled publishes repeating what their source served before are recorded as applied, with no effect.
        let repeated = try await PollItemLedger(connection: connection, logger: logger)
            .record(PollItemLedger.entries(of: commands) { earlier?[$0] != nil })
        let writer = NotificationChangeWriter(connection: connection, logger: logger)
        var produced: [NotificationChangeWriter.Produced] = []
        var segment: [(commandId: UUID, effect: NotificationChangeWriter.Effect)] = []
        var touched = Set<UUID>()
        func flush() async throws {
            produced += try await writer.apply(segment)
            segment = []
            touched = []
        }
        for command in fresh where !repeated.contains(command.commandId) {
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
            case .deleteApp:
                // What the batch wrote before for the app goes with it.
                try await flush()
                _ = try await RegistryWriter(connection: connection, logger: logger).apply(command.action, at: command.issuedAt)
                continue
            default:
                let removals = try await RegistryWriter(connection: connection, logger: logger).apply(command.action, at: command.issuedAt)
                if !removals.isEmpty { produced.append(.init(commandId: command.commandId, events: removals)) }
                continue
            }
            let notificationId = effect.notificationId
            if touched.contains(notificationId) { try await flush() }
            touched.insert(notificationId)
            segment.append((command.commandId, effect))
        }
        try await flush()

        try await fillUserStates(&produced, on: connection)
        var eventsByCommand = earlier ?? [:]
        for item in produced where !item.events.isEmpty {
            eventsByCommand[item.commandId] = item.events.wireFragment()
        }
        if !fresh.isEmpty {
            let recorded = try await record(fresh, events: eventsByCommand, clearing: clearing, on: connection)
            if recorded < fresh.count { throw earlier == nil ? AppliedBefore() : ConcurrentApplication() }
        } else if !clearing.isEmpty {
            try await connection.query(CommandBatchApplier.clearing(clearing), logger: logger)
        }
        return commands.compactMap { command in
            eventsByCommand[command.commandId].flatMap { $0.isEmpty ? nil : (command.commandId, $0) }
        }
    }

    /// Records the commands with their events (the outbox) and tells the senders waiting for some of them
    /// (ingest's `AppliedCommandWatch`) that they are applied: PostgreSQL delivers the notification when this
    /// transaction commits, so what they read next shows it. One statement; returns how many were recorded
    /// (fewer than `commands` when some were applied before).
    private func record(_ commands: [StorageCommand], events: [UUID: Data], clearing: [UUID], on connection: PostgresConnection) async throws -> Int {
        let ids = commands.map(\.commandId)
        // Empty stands for a command without events (PostgresNIO binds no NULL inside an array).
        let outbox = ids.map { ByteBuffer(bytes: events[$0] ?? Data()) }
        // A notification's payload holds at most 8,000 bytes: 200 ids of 37.
        let announced = commands.filter(\.isAnnouncedWhenApplied).map(\.commandId.lowercasedString)
        let payloads = stride(from: 0, to: announced.count, by: 200).map { announced[$0..<min($0 + 200, announced.count)].joined(separator: ",") }
        let statement = RecordStatement(
            ids: ArrayParameter(ids), events: ArrayParameter(outbox), channel: StorageCommand.appliedChannel, payloads: ArrayParameter(payloads),
            cleared: ArrayParameter(clearing))
        var recorded = 0
        for try await (count, _, _) in try await connection.execute(statement, logger: logger) { recorded = Int(count) }
        return recorded
    }

    /// Records applied commands, announces some and clears confirmed events from the outbox; answers how many were
    /// recorded. Prepared once per connection.
    struct RecordStatement: PostgresPreparedStatement {
        static let sql = """
            WITH recorded AS (
                INSERT INTO applied_commands (command_id, applied_at, wire_events)
                SELECT id, now(), NULLIF(events, ''::bytea) FROM unnest($1::uuid[], $2::bytea[]) AS t(id, events)
                ON CONFLICT (command_id) DO NOTHING
                RETURNING 1
            ),
            announced AS (SELECT pg_notify($3, payload) FROM unnest($4::text[]) AS p(payload)),
            cleared AS (
                UPDATE applied_commands SET wire_events = NULL WHERE command_id = ANY($5::uuid[]) AND wire_events IS NOT NULL RETURNING 1
            )
            SELECT (SELECT count(*) FROM recorded), (SELECT count(*) FROM announced), (SELECT count(*) FROM cleared)
            """

        /// Commands recorded, notifications sent, commands cleared.
        typealias Row = (Int64, Int64, Int64)

        var ids: ArrayParameter<UUID>
        /// The wire fragment of each command's events, empty for none.
        var events: ArrayParameter<ByteBuffer>
        var channel: String
        /// Comma-separated command ids, one notification each.
        var payloads: ArrayParameter<String>
        /// Commands whose events the broker confirmed.
        var cleared: ArrayParameter<UUID>

        func makeBindings() -> PostgresBindings {
            PostgresBindings(ids, events, channel, payloads, cleared)
        }

        func decodeRow(_ row: PostgresRow) throws -> Row {
            try row.decode(Row.self)
        }
    }

    /// Every event carries its user's badge (as the app's badge mode counts it) and devices version as of the whole batch applied.
    private func fillUserStates(_ produced: inout [NotificationChangeWriter.Produced], on connection: PostgresConnection) async throws {
        let events = produced.flatMap(\.events).filter { $0.eventSource == nil }
        guard !events.isEmpty else { return }
        let states = try await UserStateReader(logger: logger).states(appIds: events.map(\.appId), userIds: events.map(\.userId), on: connection)
        for index in produced.indices {
            for eventIndex in produced[index].events.indices {
                let event = produced[index].events[eventIndex]
                guard event.eventSource == nil else { continue }
                let state = states[UserKey(appId: event.appId, userId: event.userId)]
                produced[index].events[eventIndex].badge = state.map(\.badge) ?? 0
                produced[index].events[eventIndex].devicesVersion = state?.devicesVersion ?? 0
            }
        }
    }
}

extension CommandBatchApplier {
    /// Clears the change events of the commands `ids` from the outbox (the broker confirmed them), so that a retry of
    /// one emits nothing; in a statement of its own, when no batch came to carry it.
    public func clearOutbox(_ ids: [UUID]) async throws {
        try await client.query(Self.clearing(ids), logger: logger)
    }

    /// The statement that clears the change events of the commands `ids` from the outbox.
    static func clearing(_ ids: [UUID]) -> PostgresQuery {
        "UPDATE applied_commands SET wire_events = NULL WHERE command_id = ANY(\(ArrayParameter(ids))::uuid[]) AND wire_events IS NOT NULL"
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
