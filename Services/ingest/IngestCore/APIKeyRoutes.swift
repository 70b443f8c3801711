import Foundation
import Hummingbird
import NotifyModels
import PostgresNIO

/// `POST`/`GET /v1/apps/{appId}/api-keys` and `DELETE /v1/apps/{appId}/api-keys/{keyId}` (a key that may administer
/// the app): an app's scoped API keys, each allowed to publish, read or administer only. A key is answered once, at its
/// creation, and stored as a hash; listings show each key's id, scope, name, creation, last use and revocation.
struct APIKeyRoutes: Sendable {
    let authenticator: Authenticator
    let visibility: WriteVisibility

    private struct Listing: Encodable {
        var apiKeys: [APIKeyView]
    }

    func register(on router: Router<BasicRequestContext>) {
        router.post("/v1/apps/:appId/api-keys") { request, context in try await create(request, appId: try context.parameters.require("appId")) }
        router.get("/v1/apps/:appId/api-keys") { request, context in
            let appId = try context.parameters.require("appId")
            _ = try await authenticator.requireAppServer(request, appId: appId, for: .admin)
            return try JSONResponse.make(.ok, Listing(apiKeys: try await keys(appId: appId, keyId: nil)))
        }
        router.delete("/v1/apps/:appId/api-keys/:keyId") { request, context in
            try await revoke(request, appId: try context.parameters.require("appId"), keyId: try context.parameters.require("keyId"))
        }
    }

    private func create(_ request: Request, appId: String) async throws -> Response {
        _ = try await authenticator.requireAppServer(request, appId: appId, for: .admin)
        let (scope, name): (APIKeyScope, String)
        do {
            (scope, name) = try await JSONResponse.decode(APIKeyRequest.self, from: request).validated()
        } catch let error as ValidationError {
            throw APIFailure(error)
        }
        let key = "nk_" + OperatorRoutes.randomToken(bytes: 32)
        var generator = SystemRandomNumberGenerator()
        let keyId = "key_" + String(format: "%016llx", generator.next() as UInt64)
        let record = APIKeyRecord(
            appId: appId, keyId: keyId, keyHash: AppDirectory.hashAPIKey(key), scope: scope, name: name, createdAt: Date())
        let stored = try await visibility.send(
            StorageCommand(action: .putAPIKey(record)), thenRead: String.self,
            "SELECT key_id FROM app_api_keys WHERE app_id = \(appId) AND key_id = \(keyId)") != nil
        authenticator.apps.forget(appId)
        return try JSONResponse.make(
            stored ? .created : .accepted,
            APIKeyView(keyId: keyId, scope: scope, name: name, createdAt: record.createdAt, lastUsedAt: nil, revokedAt: nil, apiKey: key))
    }

    private func revoke(_ request: Request, appId: String, keyId: String) async throws -> Response {
        _ = try await authenticator.requireAppServer(request, appId: appId, for: .admin)
        guard let existing = try await keys(appId: appId, keyId: keyId).first else {
            throw APIFailure(.notFound, code: "api_key_not_found", message: "the app has no API key \(keyId)", field: "keyId")
        }
        if existing.revokedAt == nil {
            _ = try await visibility.send(
                StorageCommand(action: .revokeAPIKey(appId: appId, keyId: keyId, at: Date())), thenRead: String.self,
                "SELECT key_id FROM app_api_keys WHERE app_id = \(appId) AND key_id = \(keyId) AND revoked_at IS NOT NULL")
            authenticator.apps.forget(appId)
        }
        return Response(status: .noContent)
    }

    /// The app's scoped keys (one, with `keyId`), newest first, without their secrets.
    private func keys(appId: String, keyId: String?) async throws(APIFailure) -> [APIKeyView] {
        var found: [APIKeyView] = []
        do {
            let rows = try await visibility.client.query(
                """
                SELECT key_id, scope, name, created_at, last_used_at, revoked_at FROM app_api_keys
                WHERE app_id = \(appId) AND (\(keyId)::text IS NULL OR key_id = \(keyId)) ORDER BY created_at DESC, key_id
                """, logger: visibility.logger)
            for try await (id, scope, name, created, used, revoked) in rows.decode((String, String, String, Date, Date?, Date?).self) {
                guard let scope = APIKeyScope(rawValue: scope) else { continue }
                found.append(APIKeyView(keyId: id, scope: scope, name: name, createdAt: created, lastUsedAt: used, revokedAt: revoked))
            }
        } catch {
            throw APIFailure.databaseUnavailable
        }
        return found
    }
}
