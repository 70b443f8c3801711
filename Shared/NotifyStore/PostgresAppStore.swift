import Foundation
import Logging
import NotifyDatabase
import NotifyModels
import PostgresNIO

/// Apps and their settings in `apps`, `app_credentials`, `app_api_keys`, `app_broker_users`, `external_badges`,
/// `poll_sources`, `app_webhooks` and `webhook_deliveries`.
public struct PostgresAppStore: AppStore {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    public func credentials(appId: String) async throws -> StoredAppCredentials? {
        let rows = try await client.query(
            """
            SELECT a.api_key_hash, a.client_signing_key, a.badge_mode, a.requests_per_second, a.notifications_per_second,
                   a.previous_api_key_hash, a.previous_api_key_retires_at, a.previous_client_signing_key, a.previous_client_signing_key_retires_at,
                   a.identity_issuer, a.identity_jwks_url, a.identity_audience, a.identity_user_id_claim, b.user_name, b.retires_at
            FROM apps a LEFT JOIN app_broker_users b ON b.app_id = a.app_id WHERE a.app_id = \(appId)
            """, logger: logger)
        var found: StoredAppCredentials?
        for try await (hash, key, badgeMode, requests, notifications, previousHash, hashRetires, previousKey, keyRetires, issuer, jwksUrl, audience, claim, user, retiresAt)
            in rows.decode((String, String, String, Int?, Int?, String?, Date?, String?, Date?, String?, String?, String?, String?, String?, Date?).self)
        {
            var app = found ?? StoredAppCredentials(
                apiKeyHash: hash, sealedClientSigningKey: key, badgeMode: BadgeMode(rawValue: badgeMode) ?? .unread,
                rateLimit: RateLimit(requestsPerSecond: requests, notificationsPerSecond: notifications),
                previousAPIKeyHash: previousHash.flatMap { hash in hashRetires.map { (hash, $0) } },
                previousSealedClientSigningKey: previousKey.flatMap { key in keyRetires.map { (key, $0) } },
                identityProvider: IdentityProvider.stored(issuer: issuer, jwksUrl: jwksUrl, audience: audience, userIdClaim: claim))
            if let user { app.brokerUsers[user] = retiresAt }
            found = app
        }
        guard var app = found else { return nil }
        let keys = try await client.query(
            "SELECT key_hash, key_id, scope FROM app_api_keys WHERE app_id = \(appId) AND revoked_at IS NULL", logger: logger)
        for try await (hash, keyId, scope) in keys.decode((String, String, String).self) {
            if let scope = APIKeyScope(rawValue: scope) { app.scopedKeys[hash] = (keyId, scope) }
        }
        return app
    }

    public func apps(after: String?, limit: Int, appId: String?) async throws -> [AppView] {
        var found: [AppView] = []
        let rows = try await client.query(
            """
            SELECT app_id, name, created_at, badge_mode, requests_per_second, notifications_per_second,
                   CASE WHEN previous_api_key_retires_at > now() THEN previous_api_key_retires_at END,
                   CASE WHEN previous_client_signing_key_retires_at > now() THEN previous_client_signing_key_retires_at END,
                   identity_issuer, identity_jwks_url, identity_audience, identity_user_id_claim
            FROM apps
            WHERE (\(appId)::text IS NULL OR app_id = \(appId)) AND (\(after)::text IS NULL OR app_id > \(after))
            ORDER BY app_id LIMIT \(limit)
            """, logger: logger)
        for try await (id, name, created, badgeMode, requests, notifications, apiKeyRetires, signingKeyRetires, issuer, jwksUrl, audience, claim)
            in rows.decode((String, String, Date, String, Int?, Int?, Date?, Date?, String?, String?, String?, String?).self)
        {
            found.append(AppView(
                appId: id, name: name, createdAt: created, badgeMode: badgeMode,
                rateLimit: RateLimit(requestsPerSecond: requests, notificationsPerSecond: notifications),
                previousApiKeyRetiresAt: apiKeyRetires, previousClientSigningKeyRetiresAt: signingKeyRetires,
                identityProvider: IdentityProvider.stored(issuer: issuer, jwksUrl: jwksUrl, audience: audience, userIdClaim: claim)))
        }
        guard !found.isEmpty else { return [] }
        let ids = found.map(\.appId)
        let index = Dictionary(uniqueKeysWithValues: ids.enumerated().map { ($1, $0) })
        let providers = try await client.query(
            """
            SELECT app_id, provider, app_package, updated_at, rejected_reason FROM app_credentials WHERE app_id = ANY(\(ids))
            ORDER BY app_id, provider, app_package
            """, logger: logger)
        for try await (id, provider, package, updated, rejected) in providers.decode((String, String, String, Date, String?).self) {
            if let position = index[id] {
                found[position].providers.append(
                    .init(provider: provider, appPackage: package.isEmpty ? nil : package, updatedAt: updated, rejectedReason: rejected))
            }
        }
        let users = try await client.query(
            "SELECT app_id, user_name, retires_at FROM app_broker_users WHERE app_id = ANY(\(ids)) ORDER BY app_id, user_name", logger: logger)
        for try await (id, user, retires) in users.decode((String, String, Date?).self) {
            if let position = index[id] { found[position].brokerUsers.append(.init(user: user, retiresAt: retires)) }
        }
        return found
    }

    public func isGone(appId: String) async throws -> Bool {
        try await client.query(
            """
            SELECT true WHERE NOT EXISTS (SELECT 1 FROM apps WHERE app_id = \(appId))
                AND NOT EXISTS (SELECT 1 FROM app_broker_users WHERE app_id = \(appId))
            """, logger: logger
        ).collect().count == 1
    }

    public func providerSecret(appId: String, provider: String, appPackage: String) async throws -> String? {
        try await client.query(
            "SELECT secret FROM app_credentials WHERE app_id = \(appId) AND provider = \(provider) AND app_package = \(appPackage)", logger: logger
        ).decode(String.self).first(where: { _ in true })
    }

    public func isProvisioned(brokerUser user: String) async throws -> Bool {
        try await client.query(
            "SELECT 1 FROM app_broker_users WHERE user_name = \(user) AND provisioned_at IS NOT NULL", logger: logger
        ).collect().count > 0
    }

    public func apiKeys(appId: String, keyId: String?) async throws -> [APIKeyView] {
        var found: [APIKeyView] = []
        let rows = try await client.query(
            """
            SELECT key_id, scope, name, created_at, last_used_at, revoked_at FROM app_api_keys
            WHERE app_id = \(appId) AND (\(keyId)::text IS NULL OR key_id = \(keyId)) ORDER BY created_at DESC, key_id
            """, logger: logger)
        for try await (id, scope, name, created, used, revoked) in rows.decode((String, String, String, Date, Date?, Date?).self) {
            guard let scope = APIKeyScope(rawValue: scope) else { continue }
            found.append(APIKeyView(keyId: id, scope: scope, name: name, createdAt: created, lastUsedAt: used, revokedAt: revoked))
        }
        return found
    }

    public func externalBadge(appId: String, userId: String) async throws -> Int? {
        try await client.query(
            "SELECT badge::int8 FROM external_badges WHERE app_id = \(appId) AND user_id = \(userId)", logger: logger
        ).decode(Int64.self).first(where: { _ in true }).map(Int.init)
    }

    public func pollSources(appId: String, named name: String?) async throws -> [PollSourceView] {
        var found: [PollSourceView] = []
        let rows = try await client.query(
            """
            SELECT name, url, interval_seconds, authorization_header IS NOT NULL, created_at FROM poll_sources
            WHERE app_id = \(appId) AND (\(name)::text IS NULL OR name = \(name)) ORDER BY name
            """, logger: logger)
        for try await (name, url, interval, hasAuthorization, created) in rows.decode((String, String, Int32, Bool, Date).self) {
            found.append(PollSourceView(name: name, url: url, intervalSeconds: Int(interval), hasAuthorization: hasAuthorization, createdAt: created))
        }
        return found
    }

    public func allPollSources() async throws -> [PollSourceRecord] {
        var sources: [PollSourceRecord] = []
        let rows = try await client.query(
            "SELECT app_id, name, url, interval_seconds, authorization_header, created_at FROM poll_sources", logger: logger)
        for try await (appId, name, url, interval, sealed, created) in rows.decode((String, String, String, Int32, String?, Date).self) {
            sources.append(PollSourceRecord(appId: appId, name: name, url: url, intervalSeconds: Int(interval), authorization: sealed, createdAt: created))
        }
        return sources
    }

    public func pollLedger(appId: String, source: String) async throws -> [UUID: String] {
        var ledger: [UUID: String] = [:]
        let rows = try await client.query(
            "SELECT notification_id, digest FROM poll_items WHERE app_id = \(appId) AND source = \(source)", logger: logger)
        for try await (notificationId, digest) in rows.decode((UUID, String).self) { ledger[notificationId] = digest }
        return ledger
    }

    public func webhook(appId: String) async throws -> StoredWebhook? {
        let rows = try await client.query("SELECT url, events, secret FROM app_webhooks WHERE app_id = \(appId)", logger: logger)
        for try await (url, events, secret) in rows.decode((String, [String], String).self) {
            return StoredWebhook(url: url, events: events.compactMap(WebhookEventType.init(rawValue:)), sealedSecret: secret)
        }
        return nil
    }

    public func webhookAttempts(appId: String, limit: Int) async throws -> [WebhookAttempt] {
        var found: [WebhookAttempt] = []
        let rows = try await client.query(
            """
            SELECT event_id, type, attempt, status, result, reason, at FROM webhook_deliveries
            WHERE app_id = \(appId) ORDER BY at DESC, attempt DESC LIMIT \(limit)
            """, logger: logger)
        for try await (id, type, attempt, status, result, reason, at) in rows.decode((UUID, String, Int32, Int32, String, String, Date).self) {
            found.append(WebhookAttempt(
                eventId: id, appId: appId, type: type, attempt: Int(attempt), status: status == 0 ? nil : Int(status), result: result,
                reason: reason.isEmpty ? nil : reason, at: at))
        }
        return found
    }
}
