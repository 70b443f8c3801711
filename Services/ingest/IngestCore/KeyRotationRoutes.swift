import Foundation
import Hummingbird
import NotifyModels
import PostgresNIO

/// `POST /v1/apps/{appId}/api-key` and `POST /v1/apps/{appId}/client-signing-key` (operator token): a new API key or
/// client signing key, answered once; the replaced one stays accepted for an overlap (default
/// `NOTIFY_KEY_ROTATION_OVERLAP_SECONDS`, or the request's `overlapSeconds`), so app servers and issued user tokens
/// move to the new one without a refused request.
struct KeyRotationRoutes: Sendable {
    let authenticator: Authenticator
    let visibility: WriteVisibility
    let keyring: SecretKeyring
    let defaultOverlap: TimeInterval

    private struct RotateRequest: Decodable {
        /// How long the replaced key stays accepted (0 to 30 days).
        var overlapSeconds: Int?
    }

    func register(on router: Router<BasicRequestContext>) {
        router.post("/v1/apps/:appId/api-key") { request, context in
            try await rotate(request, appId: try context.parameters.require("appId"), apiKey: true)
        }
        router.post("/v1/apps/:appId/client-signing-key") { request, context in
            try await rotate(request, appId: try context.parameters.require("appId"), apiKey: false)
        }
    }

    private func rotate(_ request: Request, appId: String, apiKey: Bool) async throws -> Response {
        try authenticator.requireOperator(request)
        let body = try await JSONResponse.decodeOptional(RotateRequest.self, from: request) ?? RotateRequest()
        let overlap = body.overlapSeconds.map(TimeInterval.init) ?? defaultOverlap
        guard (0...(30 * 86400)).contains(overlap) else {
            throw APIFailure(ValidationError.invalid("overlapSeconds", "overlapSeconds must be between 0 and 2592000 (30 days)"))
        }
        _ = try await authenticator.existingApp(appId)
        let retiresAt = Date().addingTimeInterval(overlap)
        let newKey: String
        let rotation: AppKeyRotation
        let check: PostgresQuery
        if apiKey {
            newKey = "nk_" + OperatorRoutes.randomToken(bytes: 32)
            let hash = AppDirectory.hashAPIKey(newKey)
            rotation = AppKeyRotation(appId: appId, apiKeyHash: hash, clientSigningKey: nil, retiresAt: retiresAt)
            check = "SELECT app_id FROM apps WHERE app_id = \(appId) AND api_key_hash = \(hash)"
        } else {
            newKey = OperatorRoutes.randomToken(bytes: 32)
            let sealed = keyring.seal(newKey, for: .clientSigningKey(appId: appId))
            rotation = AppKeyRotation(appId: appId, apiKeyHash: nil, clientSigningKey: sealed, retiresAt: retiresAt)
            check = "SELECT app_id FROM apps WHERE app_id = \(appId) AND client_signing_key = \(sealed)"
        }
        let stored = try await visibility.send(StorageCommand(action: .rotateAppKeys(rotation)), thenRead: String.self, check) != nil
        authenticator.apps.forget(appId)
        return try JSONResponse.make(
            stored ? .created : .accepted,
            RotatedAppKey(appId: appId, apiKey: apiKey ? newKey : nil, clientSigningKey: apiKey ? nil : newKey, previousKeyRetiresAt: retiresAt))
    }
}
