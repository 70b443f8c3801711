import Foundation
import Hummingbird
import NotifyModels
import PostgresNIO

/// `GET /v1/apps` and `GET /v1/apps/{appId}` (operator token): the apps as stored, with their settings, which
/// providers have credentials (and whether a provider refused them), broker users and rotation overlaps; never a secret.
struct AppListingRoutes: Sendable {
    let authenticator: Authenticator
    let visibility: WriteVisibility

    func register(on router: Router<BasicRequestContext>) {
        router.get("/v1/apps") { request, _ in
            try authenticator.requireOperator(request)
            let limit = request.uri.queryParameters.get("limit").map { Int($0) ?? 0 } ?? 100
            guard (1...1000).contains(limit) else {
                throw APIFailure(ValidationError.invalid("limit", "limit must be 1 to 1000"))
            }
            let after = request.uri.queryParameters.get("pageToken").map { String($0) }
            let apps = try await apps(after: after, limit: limit + 1, appId: nil)
            return try JSONResponse.make(
                .ok, AppPage(apps: Array(apps.prefix(limit)), nextPageToken: apps.count > limit ? apps[limit - 1].appId : nil))
        }
        router.get("/v1/apps/:appId") { request, context in
            try authenticator.requireOperator(request)
            let appId = try context.parameters.require("appId")
            guard let app = try await apps(after: nil, limit: 1, appId: appId).first else {
                throw APIFailure(.notFound, code: "app_not_found", message: "no app with id \(appId)", field: "appId")
            }
            return try JSONResponse.make(.ok, app)
        }
    }

    /// Apps in id order after `after` (or the one with `appId`), with their providers and broker users.
    private func apps(after: String?, limit: Int, appId: String?) async throws(APIFailure) -> [AppView] {
        do {
            var found: [AppView] = []
            let rows = try await visibility.client.query(
                """
                SELECT app_id, name, created_at, badge_mode, requests_per_second, notifications_per_second,
                       CASE WHEN previous_api_key_retires_at > now() THEN previous_api_key_retires_at END,
                       CASE WHEN previous_client_signing_key_retires_at > now() THEN previous_client_signing_key_retires_at END,
                       identity_issuer, identity_jwks_url, identity_audience, identity_user_id_claim
                FROM apps
                WHERE (\(appId)::text IS NULL OR app_id = \(appId)) AND (\(after)::text IS NULL OR app_id > \(after))
                ORDER BY app_id LIMIT \(limit)
                """, logger: visibility.logger)
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
            let providers = try await visibility.client.query(
                """
                SELECT app_id, provider, app_package, updated_at, rejected_reason FROM app_credentials WHERE app_id = ANY(\(ids))
                ORDER BY app_id, provider, app_package
                """,
                logger: visibility.logger)
            for try await (id, provider, package, updated, rejected) in providers.decode((String, String, String, Date, String?).self) {
                if let position = index[id] {
                    found[position].providers.append(
                        .init(provider: provider, appPackage: package.isEmpty ? nil : package, updatedAt: updated, rejectedReason: rejected))
                }
            }
            let users = try await visibility.client.query(
                "SELECT app_id, user_name, retires_at FROM app_broker_users WHERE app_id = ANY(\(ids)) ORDER BY app_id, user_name",
                logger: visibility.logger)
            for try await (id, user, retires) in users.decode((String, String, Date?).self) {
                if let position = index[id] { found[position].brokerUsers.append(.init(user: user, retiresAt: retires)) }
            }
            return found
        } catch {
            throw APIFailure.databaseUnavailable
        }
    }
}
