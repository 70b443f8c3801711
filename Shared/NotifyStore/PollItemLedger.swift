import Foundation
import Logging
import NotifyDatabase
import NotifyModels
import PostgresNIO

/// Keeps `poll_items`, the digest of the item each polled notification was last made from, and answers which polled
/// publishes of a batch repeat what the ledger holds: those are not applied, however long ago the publish that
/// recorded the digest was (its `applied_commands` row may be purged; the ledger row stays while the source exists).
///
/// A publish whose item is new or changed is applied (a changed one replaces the notification, pushed as an update)
/// and its digest recorded, in the batch's transaction. A source's rows are deleted with it (the foreign key): they
/// describe what that source served, and a source defined again under the same name starts an empty ledger. A row whose
/// item is no longer served stays, so an item served again unchanged is not pushed again. A publish for a source
/// deleted meanwhile is applied and records nothing.
struct PollItemLedger {
    let connection: PostgresConnection
    let logger: Logger

    /// A polled publish of the batch, in command order.
    struct Entry {
        var commandId: UUID
        var appId: String
        var notificationId: UUID
        var item: PolledItem
        /// Not applied before: the only kind that may be skipped.
        var fresh: Bool
    }

    /// The polled publishes among `commands`, each with whether it is `fresh` (not in `applied`).
    static func entries(of commands: [StorageCommand], appliedBefore applied: (UUID) -> Bool) -> [Entry] {
        commands.compactMap { command in
            guard let item = command.polledItem else { return nil }
            let target: (appId: String, notificationId: UUID)
            switch command.action {
            case .publishNotification(let notification): target = (notification.appId, notification.notificationId)
            case .publishBroadcast(let broadcast): target = (broadcast.appId, broadcast.notificationId)
            default: return nil
            }
            return Entry(
                commandId: command.commandId, appId: target.appId, notificationId: target.notificationId, item: item,
                fresh: !applied(command.commandId))
        }
    }

    /// The fresh entries whose digest is the one their notification was last made from (the ledger's, or an earlier
    /// entry's in this batch), in a batch whose ledger was `kept`.
    static func repeats(_ entries: [Entry], kept: [Key: String]) -> Set<UUID> {
        var current = kept
        var repeated = Set<UUID>()
        for entry in entries {
            let key = Key(appId: entry.appId, source: entry.item.source, notificationId: entry.notificationId)
            if entry.fresh && current[key] == entry.item.digest {
                repeated.insert(entry.commandId)
            } else {
                current[key] = entry.item.digest
            }
        }
        return repeated
    }

    /// A ledger row's key.
    struct Key: Hashable {
        var appId: String
        var source: String
        var notificationId: UUID
    }

    /// Records every entry's digest (the last one of each notification) and answers the fresh entries that repeat
    /// what the ledger held; one statement.
    func record(_ entries: [Entry]) async throws -> Set<UUID> {
        guard !entries.isEmpty else { return [] }
        let rows = try await connection.query(
            """
            WITH incoming AS (
                SELECT DISTINCT ON (app_id, source, notification_id) * FROM unnest(
                    \(ArrayParameter(entries.map(\.appId)))::text[], \(ArrayParameter(entries.map(\.item.source)))::text[],
                    \(ArrayParameter(entries.map(\.notificationId)))::uuid[], \(ArrayParameter(entries.map(\.item.appNotificationId)))::text[],
                    \(ArrayParameter(entries.map(\.item.digest)))::text[], \(ArrayParameter(Array(Int64(0)..<Int64(entries.count))))::bigint[]
                ) AS t(app_id, source, notification_id, app_notification_id, digest, ord)
                ORDER BY app_id, source, notification_id, ord DESC
            ),
            recorded AS (
                INSERT INTO poll_items (app_id, source, notification_id, app_notification_id, digest, updated_at)
                SELECT i.app_id, i.source, i.notification_id, i.app_notification_id, i.digest, now()
                FROM incoming i JOIN poll_sources s ON s.app_id = i.app_id AND s.name = i.source
                ON CONFLICT (app_id, source, notification_id) DO UPDATE SET
                    digest = EXCLUDED.digest, app_notification_id = EXCLUDED.app_notification_id, updated_at = EXCLUDED.updated_at
                WHERE poll_items.digest <> EXCLUDED.digest
                RETURNING 1
            )
            SELECT p.app_id, p.source, p.notification_id, p.digest FROM poll_items p JOIN incoming i USING (app_id, source, notification_id)
            """, logger: logger)
        var kept: [Key: String] = [:]
        for try await (appId, source, notificationId, digest) in rows.decode((String, String, UUID, String).self) {
            kept[Key(appId: appId, source: source, notificationId: notificationId)] = digest
        }
        let repeated = Self.repeats(entries, kept: kept)
        if !repeated.isEmpty {
            logger.debug("polled items unchanged since their notification was made; not published again", metadata: ["count": "\(repeated.count)"])
        }
        return repeated
    }
}
