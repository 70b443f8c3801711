import Foundation
import Hummingbird
import NotifyModels
import NotifyStore

/// `POST`/`GET /v1/apps/{appId}/api-keys` and `DELETE /v1/apps/{appId}/api-keys/{keyId}` (a key that may administer
/// the app): an app's scoped API keys, each allowed to publish, read or administer only. A key is answered once, at its
/// creation, and stored as a hash; listings show each key's id, scope, name, creation, last use and revocation.
struct APIKeyRoutes: Sendable {
    let authenticator: Authenticator
    let visibility: WriteVisibility
    let store: any AppStore

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
        let stored = try await visibility.send(StorageCommand(action: .putAPIKey(record))) { [store] in
            try await store.apiKeys(appId: appId, keyId: keyId).first
        } != nil
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
            _ = try await visibility.send(StorageCommand(action: .revokeAPIKey(appId: appId, keyId: keyId, at: Date()))) { [store] in
                try await store.apiKeys(appId: appId, keyId: keyId).first { $0.revokedAt != nil }
            }
            authenticator.apps.forget(appId)
        }
        return Response(status: .noContent)
    }

    /// The app's scoped keys (one, with `keyId`), newest first, without their secrets.
    private func keys(appId: String, keyId: String?) async throws(APIFailure) -> [APIKeyView] {
        try await APIFailure.reading { try await store.apiKeys(appId: appId, keyId: keyId) }
    }
}
