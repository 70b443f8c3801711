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

        var replayed: [UUID: String] = [:]
        let repeats = ids.filter { !fresh.contains($0) }
        if !repeats.isEmpty {
            logger.debug("redelivered commands; emitting their events again", metadata: ["count": "\(repeats.count)"])
            let rows = try await connection.query(
                "SELECT command_id, events FROM applied_commands WHERE command_id = ANY(\(repeats)::uuid[]) AND events IS NOT NULL",
                logger: logger)
            for try await (id, events) in rows.decode((UUID, String).self) { replayed[id] = events }
        }

        var publications: [(commandId: UUID, notification: PublishedNotification)] = []
        for command in commands where fresh.contains(command.commandId) {
            switch command.action {
            case .createApp(let app):
                try await connection.query(
                    """
                    INSERT INTO apps (app_id, name, api_key_hash, client_signing_key, broker_user, created_at)
                    VALUES (\(app.appId), \(app.name), \(app.apiKeyHash), \(app.clientSigningKey), \(app.brokerUser), \(app.createdAt))
                    ON CONFLICT (app_id) DO NOTHING
                    """, logger: logger)
            case .setAPNsCredentials(let appId, let credentials):
                let json = String(decoding: try WireCoding.makeEncoder().encode(credentials), as: UTF8.self)
                try await connection.query(
                    """
                    INSERT INTO app_credentials (app_id, provider, credentials, updated_at)
                    VALUES (\(appId), 'apns', \(json)::jsonb, now())
                    ON CONFLICT (app_id, provider) DO UPDATE SET credentials = EXCLUDED.credentials, updated_at = EXCLUDED.updated_at
                    """, logger: logger)
            case .registerSubscription(let subscription):
                try await connection.query(
                    """
                    INSERT INTO subscriptions (subscription_id, app_id, user_id, platform, push_token, app_package, display_name, expires_at, registered_at)
                    VALUES (\(subscription.subscriptionId), \(subscription.appId), \(subscription.userId), \(subscription.platform.rawValue),
                            \(subscription.pushToken), \(subscription.appPackage), \(subscription.displayName),
                            \(subscription.expirationDateTime), \(subscription.registeredAt))
                    ON CONFLICT (app_id, platform, push_token) DO UPDATE SET
                        user_id = EXCLUDED.user_id, app_package = EXCLUDED.app_package, display_name = EXCLUDED.display_name,
                        expires_at = EXCLUDED.expires_at, registered_at = EXCLUDED.registered_at
                    """, logger: logger)
            case .unregisterSubscription(let appId, let userId, let subscriptionId):
                try await connection.query(
                    "DELETE FROM subscriptions WHERE subscription_id = \(subscriptionId) AND app_id = \(appId) AND user_id = \(userId)",
                    logger: logger)
            case .publishNotification(let notification):
                publications.append((command.commandId, notification))
            }
        }

        let produced = try await store(publications, on: connection)
        if !produced.isEmpty {
            let commandIds = produced.map(\.commandId)
            let events = produced.map(\.event)
            try await connection.query(
                """
                UPDATE applied_commands SET events = v.events
                FROM unnest(\(commandIds)::uuid[], \(events)::text[]) AS v(id, events)
                WHERE applied_commands.command_id = v.id
                """, logger: logger)
        }

        var byCommand = replayed
        for item in produced { byCommand[item.commandId] = item.event }
        return ids.compactMap { byCommand[$0] }
    }

    /// Stores new and replaced notifications with their users' next sequence numbers.
    private func store(
        _ publications: [(commandId: UUID, notification: PublishedNotification)], on connection: PostgresConnection
    ) async throws -> [(commandId: UUID, event: String)] {
        guard !publications.isEmpty else { return [] }
        // A later publish of the same notification in this batch supersedes an earlier one.
        var lastIndexById: [UUID: Int] = [:]
        for (index, item) in publications.enumerated() { lastIndexById[item.notification.notificationId] = index }
        let effective = publications.enumerated().filter { lastIndexById[$0.element.notification.notificationId] == $0.offset }.map(\.element)

        let sequences = try await SequenceAllocator(logger: logger)
            .allocate(for: effective.map { UserKey(appId: $0.notification.appId, userId: $0.notification.userId) }, on: connection)

        let encoder = WireCoding.makeEncoder()
        var notificationIds: [UUID] = [], appIds: [String] = [], userIds: [String] = [], appNotificationIds: [String] = []
        var contents: [String] = [], receivedAts: [Date] = [], expirations: [Date] = []
        for item in effective {
            let notification = item.notification
            notificationIds.append(notification.notificationId)
            appIds.append(notification.appId)
            userIds.append(notification.userId)
            appNotificationIds.append(notification.content.appNotificationId ?? "")
            contents.append(String(decoding: try encoder.encode(notification.content), as: UTF8.self))
            receivedAts.append(notification.receivedAt)
            expirations.append(notification.content.expirationDateTime)
        }
        var created = Set<UUID>()
        let upserted = try await connection.query(
            """
            INSERT INTO notifications (notification_id, app_id, user_id, app_notification_id, content, sequence, created_at, updated_at, expires_at)
            SELECT id, app, usr, NULLIF(anid, ''), content::jsonb, seq, received, received, expires
            FROM unnest(\(notificationIds)::uuid[], \(appIds)::text[], \(userIds)::text[], \(appNotificationIds)::text[],
                        \(contents)::text[], \(sequences)::int8[], \(receivedAts)::timestamptz[], \(expirations)::timestamptz[])
                 AS t(id, app, usr, anid, content, seq, received, expires)
            ON CONFLICT (notification_id) DO UPDATE SET
                content = EXCLUDED.content, sequence = EXCLUDED.sequence, updated_at = EXCLUDED.updated_at,
                expires_at = EXCLUDED.expires_at, status = 'active', read_state = 'unread', user_action_state = 'noInteraction'
            RETURNING notification_id, (xmax = 0)
            """, logger: logger)
        for try await (id, isNew) in upserted.decode((UUID, Bool).self) where isNew { created.insert(id) }

        let kinds = notificationIds.map { created.contains($0) ? ChangeKind.created.rawValue : ChangeKind.updated.rawValue }
        try await connection.query(
            """
            INSERT INTO changes (app_id, user_id, sequence, notification_id, kind, changed_at)
            SELECT * FROM unnest(\(appIds)::text[], \(userIds)::text[], \(sequences)::int8[], \(notificationIds)::uuid[], \(kinds)::text[], \(receivedAts)::timestamptz[])
            """, logger: logger)

        let unread = try await UnreadCounter(logger: logger).counts(appIds: appIds, userIds: userIds, on: connection)
        var events: [(commandId: UUID, event: String)] = []
        events.reserveCapacity(effective.count)
        for (index, item) in effective.enumerated() {
            let notification = item.notification
            let event = ChangeEvent(
                appId: notification.appId, userId: notification.userId, sequence: sequences[index],
                kind: created.contains(notification.notificationId) ? .created : .updated,
                notificationId: notification.notificationId, content: notification.content,
                readState: .unread, userActionState: .noInteraction, originSubscriptionId: nil,
                unreadCount: unread[UserKey(appId: notification.appId, userId: notification.userId)] ?? 0,
                changedAt: notification.receivedAt)
            events.append((item.commandId, String(decoding: try encoder.encode(event), as: UTF8.self)))
        }
        return events
    }
}

/// A user of an app: the scope of a change sequence and a badge.
struct UserKey: Hashable, Sendable {
    var appId: String
    var userId: String
}
