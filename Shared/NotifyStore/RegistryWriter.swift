import Foundation
import Logging
import NotifyDatabase
import NotifyModels
import PostgresNIO

/// Writes apps, provider credentials and device subscriptions. A change that takes a user out of an event source
/// removes the source's broadcasts from the user's feed (`BroadcastRemoval`): `apply` answers those changes' events.
struct RegistryWriter {
    let connection: PostgresConnection
    let logger: Logger

    /// Applies `action`, issued at `at`; answers the change events of the broadcasts it removed from users' feeds.
    func apply(_ action: StorageCommand.Action, at: Date) async throws -> [ChangeEvent] {
        var ended: [BroadcastRemoval.EndedMembership] = []
        switch action {
        case .createApp(let app):
            try await connection.query(
                """
                INSERT INTO apps (app_id, name, api_key_hash, client_signing_key, created_at, badge_mode)
                VALUES (\(app.appId), \(app.name), \(app.apiKeyHash), \(app.clientSigningKey), \(app.createdAt), \(app.badgeMode.rawValue))
                ON CONFLICT (app_id) DO NOTHING
                """, logger: logger)
            if let user = app.brokerUser {
                try await putBrokerUser(BrokerUserRecord(appId: app.appId, user: user, createdAt: app.createdAt, retiresAt: nil))
            }
        case .putBrokerUser(let record):
            try await putBrokerUser(record)
        case .deleteApp(let appId):
            try await deleteApp(appId)
        case .setProviderCredentials(let appId, let provider, let appPackage, let sealedCredentials):
            try await connection.query(
                """
                INSERT INTO app_credentials (app_id, provider, app_package, secret, updated_at)
                VALUES (\(appId), \(provider.rawValue), \(appPackage), \(sealedCredentials), now())
                ON CONFLICT (app_id, provider, app_package) DO UPDATE SET
                    secret = EXCLUDED.secret, updated_at = EXCLUDED.updated_at, rejected_reason = NULL, rejected_at = NULL
                """, logger: logger)
        case .rotateAppKeys(let rotation):
            try await rotateKeys(rotation)
        case .putAPIKey(let key):
            try await connection.query(
                """
                INSERT INTO app_api_keys (app_id, key_id, key_hash, scope, name, created_at)
                SELECT app_id, \(key.keyId), \(key.keyHash), \(key.scope.rawValue), \(key.name), \(key.createdAt) FROM apps WHERE app_id = \(key.appId)
                ON CONFLICT (app_id, key_id) DO NOTHING
                """, logger: logger)
        case .revokeAPIKey(let appId, let keyId, let at):
            try await connection.query(
                "UPDATE app_api_keys SET revoked_at = \(at) WHERE app_id = \(appId) AND key_id = \(keyId) AND revoked_at IS NULL", logger: logger)
        case .recordAPIKeyUse(let appId, let keyId, let at):
            try await connection.query(
                """
                UPDATE app_api_keys SET last_used_at = \(at)
                WHERE app_id = \(appId) AND key_id = \(keyId) AND (last_used_at IS NULL OR last_used_at < \(at))
                """, logger: logger)
        case .recordDeviceSync(let appId, let userId, let subscriptionId, let sequence):
            try await connection.query(
                """
                UPDATE subscriptions SET synced_sequence = greatest(coalesce(synced_sequence, 0), \(sequence))
                WHERE subscription_id = \(subscriptionId) AND app_id = \(appId) AND user_id = \(userId)
                """, logger: logger)
        case .registerSubscription(let subscription):
            let storedId = try await register(subscription, ending: &ended)
            if let replaced = subscription.replacesSubscriptionId, replaced != storedId {
                // The same device with a new token: its memberships move here, and the old subscription goes. Only a
                // subscription of the same user is replaced: one of another user's is left as it is. (A membership the
                // new subscription held from later takes nothing from the feed: the removal finds the earlier one kept.)
                try await connection.query(
                    """
                    INSERT INTO event_source_members (app_id, event_source, subscription_id, joined_at)
                    SELECT m.app_id, m.event_source, \(storedId), m.joined_at FROM event_source_members m
                    JOIN subscriptions s ON s.subscription_id = m.subscription_id
                    WHERE m.subscription_id = \(replaced) AND s.app_id = \(subscription.appId) AND s.user_id = \(subscription.userId)
                    ON CONFLICT DO NOTHING
                    """, logger: logger)
                let removed = try await deleteSubscription(replaced, appId: subscription.appId, userId: subscription.userId, ending: &ended)
                try await webhooks.record(.subscriptionDeleted, removed.map {
                    .init(appId: subscription.appId, userId: subscription.userId, subscriptionId: $0, reason: "replaced")
                })
            }
            if let sources = subscription.eventSources {
                let names = Array(Set(sources))
                ended += try await recordMembers(.eventSourceLeft, reason: nil, connection.query(
                    """
                    WITH removed AS (
                        DELETE FROM event_source_members WHERE subscription_id = \(storedId) AND event_source <> ALL(\(ArrayParameter(names))::text[])
                        RETURNING app_id, event_source, subscription_id, joined_at
                    )
                    SELECT r.app_id, r.event_source, r.subscription_id, s.user_id, r.joined_at FROM removed r JOIN subscriptions s USING (subscription_id)
                    """, logger: logger))
                try await join(appId: subscription.appId, names: names, subscriptionIds: [storedId])
            }
        case .putEventSource(let source):
            try await connection.query(
                """
                INSERT INTO event_sources (app_id, name, policy, description, created_at)
                SELECT app_id, \(source.name), \(source.policy.rawValue), \(source.description), \(source.createdAt) FROM apps
                WHERE app_id = \(source.appId)
                ON CONFLICT (app_id, name) DO UPDATE SET policy = EXCLUDED.policy, description = EXCLUDED.description
                """, logger: logger)
        case .deleteEventSource(let appId, let name):
            ended = try await leave(appId: appId, name: name, subscriptionIds: nil)
            try await connection.query("DELETE FROM event_sources WHERE app_id = \(appId) AND name = \(name)", logger: logger)
        case .putWebhook(let webhook):
            try await connection.query(
                """
                INSERT INTO app_webhooks (app_id, url, events, secret, created_at)
                SELECT app_id, \(webhook.url), \(ArrayParameter(webhook.events))::text[], \(webhook.secret), \(webhook.createdAt) FROM apps
                WHERE app_id = \(webhook.appId)
                ON CONFLICT (app_id) DO UPDATE SET url = EXCLUDED.url, events = EXCLUDED.events, secret = EXCLUDED.secret
                """, logger: logger)
        case .deleteWebhook(let appId):
            try await connection.query("DELETE FROM app_webhooks WHERE app_id = \(appId)", logger: logger)
        case .setBadgeMode(let appId, let mode):
            try await setBadgeMode(mode, appId: appId)
        case .setRateLimit(let appId, let limit):
            try await connection.query(
                """
                UPDATE apps SET requests_per_second = \(limit.requestsPerSecond), notifications_per_second = \(limit.notificationsPerSecond)
                WHERE app_id = \(appId)
                """, logger: logger)
        case .setIdentityProvider(let appId, let provider):
            try await connection.query(
                """
                UPDATE apps SET identity_issuer = \(provider?.issuer), identity_jwks_url = \(provider?.jwksUrl),
                    identity_audience = \(provider?.audience), identity_user_id_claim = \(provider?.userIdClaim)
                WHERE app_id = \(appId)
                """, logger: logger)
        case .setExternalBadge(let appId, let userId, let badge, let at):
            try await connection.query(
                """
                INSERT INTO external_badges (app_id, user_id, badge, updated_at) VALUES (\(appId), \(userId), \(badge), \(at))
                ON CONFLICT (app_id, user_id) DO UPDATE SET badge = EXCLUDED.badge, updated_at = EXCLUDED.updated_at
                WHERE external_badges.updated_at <= EXCLUDED.updated_at
                """, logger: logger)
        case .putPollSource(let source):
            try await connection.query(
                """
                INSERT INTO poll_sources (app_id, name, url, interval_seconds, authorization_header, created_at)
                SELECT app_id, \(source.name), \(source.url), \(source.intervalSeconds), \(source.authorization), \(source.createdAt) FROM apps
                WHERE app_id = \(source.appId)
                ON CONFLICT (app_id, name) DO UPDATE SET
                    url = EXCLUDED.url, interval_seconds = EXCLUDED.interval_seconds, authorization_header = EXCLUDED.authorization_header
                """, logger: logger)
        case .deletePollSource(let appId, let name):
            try await connection.query("DELETE FROM poll_sources WHERE app_id = \(appId) AND name = \(name)", logger: logger)
        case .joinEventSource(let appId, let name, let ids, let parameters):
            try await join(appId: appId, names: [name], subscriptionIds: ids, parameters: parameters)
        case .leaveEventSource(let appId, let name, let ids):
            ended = try await leave(appId: appId, name: name, subscriptionIds: ids)
        case .unregisterSubscription(let appId, let userId, let subscriptionId):
            let removed = try await deleteSubscription(subscriptionId, appId: appId, userId: userId, ending: &ended)
            try await webhooks.record(
                .subscriptionDeleted, removed.map { .init(appId: appId, userId: userId, subscriptionId: $0, reason: "unregistered") })
        case .publishNotification, .publishBroadcast, .changeNotificationState, .expireDueNotifications, .purgeTombstones:
            preconditionFailure("not a registry command")
        }
        return try await BroadcastRemoval(connection: connection, logger: logger).write(ended, at: at)
    }

    private var webhooks: WebhookOutbox { WebhookOutbox(connection: connection, logger: logger) }

    /// Deletes the user's subscription `id` (its memberships go with it, each added to `ended`); answers the ids deleted.
    private func deleteSubscription(
        _ id: UUID, appId: String, userId: String, ending ended: inout [BroadcastRemoval.EndedMembership]
    ) async throws -> [UUID] {
        // The memberships are read in the statement's snapshot, before the delete cascades to them.
        let rows = try await connection.query(
            """
            WITH gone AS (
                DELETE FROM subscriptions WHERE subscription_id = \(id) AND app_id = \(appId) AND user_id = \(userId) RETURNING subscription_id
            )
            SELECT g.subscription_id, m.event_source, m.joined_at FROM gone g LEFT JOIN event_source_members m USING (subscription_id)
            """, logger: logger)
        var removed = Set<UUID>()
        for try await (subscriptionId, source, joinedAt) in rows.decode((UUID, String?, Date?).self) {
            removed.insert(subscriptionId)
            if let source, let joinedAt {
                ended.append(.init(appId: appId, userId: userId, eventSource: source, joinedAt: joinedAt))
            }
        }
        return Array(removed)
    }

    /// Stores the subscription of a device's token and answers its id: the token's subscription if the user already has
    /// it (updated in place), else a new one (`subscription.created`). A token another user holds is first taken from
    /// that user (`TokenReassignment`), so the device starts clean under a new id.
    /// The memberships the token's previous user lost are added to `ended`.
    private func register(_ subscription: DeviceSubscription, ending ended: inout [BroadcastRemoval.EndedMembership]) async throws -> UUID {
        let keys = try subscription.keys.map(JSONColumn.text)
        let reassignment = TokenReassignment(connection: connection, logger: logger)
        // Twice at most: another user's registration of the token may commit between the release and the insert.
        for _ in 0..<2 {
            let released = try await reassignment.release(
                appId: subscription.appId, platform: subscription.platform, pushToken: subscription.pushToken, takenBy: subscription.userId,
                ending: &ended)
            // An ingest that looked the token up before it changed hands may name the released id: never reuse it.
            let newId = released == subscription.subscriptionId ? UUID.random() : subscription.subscriptionId
            let stored = try await connection.query(
                """
                INSERT INTO subscriptions (subscription_id, app_id, user_id, platform, push_token, push_keys, app_package, display_name, expires_at, registered_at)
                VALUES (\(newId), \(subscription.appId), \(subscription.userId), \(subscription.platform.rawValue),
                        \(subscription.pushToken), \(keys)::jsonb, \(subscription.appPackage), \(subscription.displayName),
                        \(subscription.expirationDateTime), \(subscription.registeredAt))
                ON CONFLICT (app_id, platform, push_token) DO UPDATE SET
                    push_keys = EXCLUDED.push_keys, app_package = EXCLUDED.app_package, display_name = EXCLUDED.display_name,
                    expires_at = EXCLUDED.expires_at, registered_at = EXCLUDED.registered_at
                WHERE subscriptions.user_id = EXCLUDED.user_id
                RETURNING subscription_id, (xmax = 0)
                """, logger: logger)
            // Read the answer even when the id is not needed: an error (e.g. an unknown app) arrives with it.
            var answer: (id: UUID, created: Bool)?
            for try await row in stored.decode((UUID, Bool).self) { answer = row }
            guard let (storedId, created) = answer else { continue }
            if created {
                try await webhooks.record(.subscriptionCreated, [.init(
                    appId: subscription.appId, userId: subscription.userId, subscriptionId: storedId, platform: subscription.platform.rawValue)])
            }
            return storedId
        }
        throw RegistrationContended(appId: subscription.appId)
    }

    /// Another user's registration of the same token won twice in a row; the command is applied again later.
    struct RegistrationContended: Error, CustomStringConvertible {
        var appId: String
        var description: String { "a push token of app \(appId) was registered by other users meanwhile, twice" }
    }

    /// Puts the app's subscriptions `subscriptionIds` in the sources of `names` that exist (already members stay).
    /// With `parameters`, they replace the members' own (already members included); a webhook event for each new member.
    private func join(appId: String, names: [String], subscriptionIds: [UUID], parameters: [String: JSONValue]? = nil) async throws {
        let parametersJSON = try parameters.map(JSONColumn.text)
        _ = try await recordMembers(.eventSourceJoined, reason: nil, connection.query(
            """
            WITH added AS (
                INSERT INTO event_source_members AS m (app_id, event_source, subscription_id, parameters)
                SELECT e.app_id, e.name, s.subscription_id, \(parametersJSON)::jsonb FROM event_sources e
                JOIN subscriptions s ON s.app_id = e.app_id AND s.subscription_id = ANY(\(ArrayParameter(subscriptionIds))::uuid[])
                WHERE e.app_id = \(appId) AND e.name = ANY(\(ArrayParameter(names))::text[])
                ON CONFLICT (app_id, event_source, subscription_id) DO UPDATE SET parameters = EXCLUDED.parameters
                    WHERE EXCLUDED.parameters IS NOT NULL
                RETURNING m.app_id, m.event_source, m.subscription_id, m.joined_at, (m.xmax = 0) AS inserted
            )
            SELECT a.app_id, a.event_source, a.subscription_id, s.user_id, a.joined_at FROM added a JOIN subscriptions s USING (subscription_id)
            WHERE a.inserted
            """, logger: logger))
    }

    /// Takes subscriptions (nil: every member, as the source is deleted) out of a source; answers the memberships ended.
    private func leave(appId: String, name: String, subscriptionIds: [UUID]?) async throws -> [BroadcastRemoval.EndedMembership] {
        try await recordMembers(.eventSourceLeft, reason: subscriptionIds == nil ? "sourceDeleted" : nil, connection.query(
            """
            WITH removed AS (
                DELETE FROM event_source_members
                WHERE app_id = \(appId) AND event_source = \(name)
                  AND (\(subscriptionIds.map { ArrayParameter($0) })::uuid[] IS NULL OR subscription_id = ANY(\(subscriptionIds.map { ArrayParameter($0) })::uuid[]))
                RETURNING app_id, event_source, subscription_id, joined_at
            )
            SELECT r.app_id, r.event_source, r.subscription_id, s.user_id, r.joined_at FROM removed r JOIN subscriptions s USING (subscription_id)
            """, logger: logger))
    }

    /// Records a webhook event for each membership row (app, source, subscription, user, joined at) of `rows`; answers
    /// the memberships.
    private func recordMembers(
        _ type: WebhookEventType, reason: String?, _ rows: PostgresRowSequence
    ) async throws -> [BroadcastRemoval.EndedMembership] {
        var subjects: [WebhookOutbox.Subject] = []
        var memberships: [BroadcastRemoval.EndedMembership] = []
        for try await (appId, source, subscriptionId, userId, joinedAt) in rows.decode((String, String, UUID, String, Date).self) {
            subjects.append(.init(appId: appId, userId: userId, subscriptionId: subscriptionId, eventSource: source, reason: reason))
            memberships.append(.init(appId: appId, userId: userId, eventSource: source, joinedAt: joinedAt))
        }
        try await webhooks.record(type, subjects)
        return memberships
    }

    /// Records a broker user of an app that exists (a user of an app deleted meanwhile is not recorded): a new one, with
    /// its password's hash, for `BrokerUserProvisioner` to create in RabbitMQ; one without a hash exists there already.
    /// A retirement only ever comes sooner: a retired user is never taken back, whatever order commands are applied in.
    /// A user to create, or one retired now, is announced to the provisioner at commit.
    private func putBrokerUser(_ record: BrokerUserRecord) async throws {
        try await connection.query(
            """
            WITH written AS (
                INSERT INTO app_broker_users (user_name, app_id, created_at, retires_at, password_hash, provisioned_at)
                SELECT \(record.user), app_id, \(record.createdAt), \(record.retiresAt), \(record.passwordHash),
                       CASE WHEN \(record.passwordHash)::text IS NULL THEN now() END
                FROM apps WHERE app_id = \(record.appId)
                ON CONFLICT (user_name) DO UPDATE SET retires_at = least(app_broker_users.retires_at, EXCLUDED.retires_at)
                WHERE app_broker_users.app_id = EXCLUDED.app_id
                RETURNING provisioned_at, retires_at
            )
            SELECT pg_notify(\(StoreChannel.brokerUsers), '') WHERE EXISTS (
                SELECT 1 FROM written WHERE provisioned_at IS NULL OR retires_at <= now())
            """, logger: logger)
    }

    /// The new keys replace the current ones, which are kept until `retiresAt`. A command applied again changes
    /// nothing (the new key is already the current one), so the replaced key is never lost from the overlap.
    private func rotateKeys(_ rotation: AppKeyRotation) async throws {
        if let hash = rotation.apiKeyHash {
            try await connection.query(
                """
                UPDATE apps SET previous_api_key_hash = api_key_hash, previous_api_key_retires_at = \(rotation.retiresAt), api_key_hash = \(hash)
                WHERE app_id = \(rotation.appId) AND api_key_hash <> \(hash)
                """, logger: logger)
        }
        if let key = rotation.clientSigningKey {
            try await connection.query(
                """
                UPDATE apps SET previous_client_signing_key = client_signing_key, previous_client_signing_key_retires_at = \(rotation.retiresAt),
                    client_signing_key = \(key)
                WHERE app_id = \(rotation.appId) AND client_signing_key <> \(key)
                """, logger: logger)
        }
    }

    /// Deletes the app's rows from every table; the app row last, which takes its credentials, subscriptions and event
    /// sources with it. Its broker users are retired now, for `BrokerUserProvisioner` to delete them from RabbitMQ (and
    /// then their rows).
    /// Sets the app's badge mode. Into a mode that counts conversations, the app's unread notifications are counted per
    /// group afresh: writers of notifications wait for this transaction (the table's SHARE lock), so the count misses
    /// none, and their statements after it, seeing the new mode, count their own rows. Out of one, the counts go.
    private func setBadgeMode(_ mode: BadgeMode, appId: String) async throws {
        if mode.countsGroups {
            try await connection.query("LOCK TABLE notifications IN SHARE MODE", logger: logger)
        }
        try await connection.query("UPDATE apps SET badge_mode = \(mode.rawValue) WHERE app_id = \(appId)", logger: logger)
        try await connection.query("DELETE FROM unread_group_counts WHERE app_id = \(appId)", logger: logger)
        guard mode.countsGroups else { return }
        try await connection.query(
            """
            INSERT INTO unread_group_counts (app_id, user_id, group_key, unread)
            SELECT app_id, user_id, coalesce(content ->> 'groupName', ''), count(*) FROM notifications
            WHERE app_id = \(appId) AND read_state = 'unread' AND status = 'active'
            GROUP BY 1, 2, 3
            """, logger: logger)
    }

    private func deleteApp(_ appId: String) async throws {
        try await connection.query(
            """
            WITH retired AS (
                UPDATE app_broker_users SET retires_at = now() WHERE app_id = \(appId) AND (retires_at IS NULL OR retires_at > now())
                RETURNING 1
            )
            SELECT pg_notify(\(StoreChannel.brokerUsers), '') WHERE EXISTS (SELECT 1 FROM retired)
            """, logger: logger)
        for table in Self.appTables {
            try await connection.query(PostgresQuery(unsafeSQL: "DELETE FROM \(table) WHERE app_id = $1", binds: Self.binds(appId)), logger: logger)
        }
        try await connection.query("DELETE FROM apps WHERE app_id = \(appId)", logger: logger)
    }

    /// The tables keyed by app without a foreign key to apps.
    private static let appTables = [
        "changes", "notifications", "user_sequences", "unread_counts", "unread_group_counts", "device_versions", "delivery_records", "broadcasts", "broadcast_sequences", "broadcast_states", "external_badges", "event_source_members",
        "broadcast_removals_pending", "webhook_events", "webhook_deliveries",
    ]

    private static func binds(_ appId: String) -> PostgresBindings {
        var binds = PostgresBindings()
        binds.append(appId)
        return binds
    }
}
