import Foundation
import Logging
import NotifyDatabase
import NotifyModels
import PostgresNIO

/// Writes apps, provider credentials and device subscriptions.
struct RegistryWriter {
    let connection: PostgresConnection
    let logger: Logger

    func apply(_ action: StorageCommand.Action) async throws {
        switch action {
        case .createApp(let app):
            try await connection.query(
                """
                INSERT INTO apps (app_id, name, api_key_hash, client_signing_key, broker_user, created_at)
                VALUES (\(app.appId), \(app.name), \(app.apiKeyHash), \(app.clientSigningKey), \(app.brokerUser), \(app.createdAt))
                ON CONFLICT (app_id) DO NOTHING
                """, logger: logger)
        case .setProviderCredentials(let appId, let credentials):
            let json = String(decoding: try credentials.encoded(with: WireCoding.makeEncoder()), as: UTF8.self)
            try await connection.query(
                """
                INSERT INTO app_credentials (app_id, provider, credentials, updated_at)
                VALUES (\(appId), \(credentials.platform.rawValue), \(json)::jsonb, now())
                ON CONFLICT (app_id, provider) DO UPDATE SET
                    credentials = EXCLUDED.credentials, updated_at = EXCLUDED.updated_at, rejected_reason = NULL, rejected_at = NULL
                """, logger: logger)
        case .registerSubscription(let subscription):
            let keys = try subscription.keys.map { String(decoding: try WireCoding.makeEncoder().encode($0), as: UTF8.self) }
            let stored = try await connection.query(
                """
                INSERT INTO subscriptions (subscription_id, app_id, user_id, platform, push_token, push_keys, app_package, display_name, expires_at, registered_at)
                VALUES (\(subscription.subscriptionId), \(subscription.appId), \(subscription.userId), \(subscription.platform.rawValue),
                        \(subscription.pushToken), \(keys)::jsonb, \(subscription.appPackage), \(subscription.displayName),
                        \(subscription.expirationDateTime), \(subscription.registeredAt))
                ON CONFLICT (app_id, platform, push_token) DO UPDATE SET
                    user_id = EXCLUDED.user_id, push_keys = EXCLUDED.push_keys, app_package = EXCLUDED.app_package, display_name = EXCLUDED.display_name,
                    expires_at = EXCLUDED.expires_at, registered_at = EXCLUDED.registered_at
                RETURNING subscription_id
                """, logger: logger)
            // Read the answer even when the id is not needed: an error (e.g. an unknown app) arrives with it.
            var storedId = subscription.subscriptionId
            for try await id in stored.decode(UUID.self) { storedId = id }
            if let sources = subscription.eventSources {
                try await connection.query("DELETE FROM event_source_members WHERE subscription_id = \(storedId)", logger: logger)
                try await connection.query(
                    """
                    INSERT INTO event_source_members (app_id, event_source, subscription_id)
                    SELECT \(subscription.appId), source, \(storedId) FROM unnest(\(ArrayParameter(Array(Set(sources))))::text[]) AS t(source)
                    """, logger: logger)
            }
        case .unregisterSubscription(let appId, let userId, let subscriptionId):
            try await connection.query(
                "DELETE FROM subscriptions WHERE subscription_id = \(subscriptionId) AND app_id = \(appId) AND user_id = \(userId)",
                logger: logger)
        case .publishNotification, .publishBroadcast, .changeNotificationState, .expireDueNotifications, .purgeTombstones:
            preconditionFailure("not a registry command")
        }
    }
}
