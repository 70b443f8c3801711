import Foundation
import Hummingbird
import NotifyModels
import NotifyStore

/// `POST /v1/apps/{appId}/api-key` and `POST /v1/apps/{appId}/client-signing-key` (operator token): a new API key or
/// client signing key, answered once; the replaced one stays accepted for an overlap (default
/// `NOTIFY_KEY_ROTATION_OVERLAP_SECONDS`, or the request's `overlapSeconds`), so app servers and issued user tokens
/// move to the new one without a refused request.
struct KeyRotationRoutes: Sendable {
    let authenticator: Authenticator
    let visibility: WriteVisibility
    let store: any AppStore
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
        if apiKey {
            newKey = "nk_" + OperatorRoutes.randomToken(bytes: 32)
            rotation = AppKeyRotation(appId: appId, apiKeyHash: AppDirectory.hashAPIKey(newKey), clientSigningKey: nil, retiresAt: retiresAt)
        } else {
            newKey = OperatorRoutes.randomToken(bytes: 32)
            let sealed = keyring.seal(newKey, for: .clientSigningKey(appId: appId))
            rotation = AppKeyRotation(appId: appId, apiKeyHash: nil, clientSigningKey: sealed, retiresAt: retiresAt)
        }
        let stored = try await visibility.send(StorageCommand(action: .rotateAppKeys(rotation))) { [store] in
            let current = try await store.credentials(appId: appId)
            return current?.apiKeyHash == rotation.apiKeyHash || current?.sealedClientSigningKey == rotation.clientSigningKey ? true : nil
        } != nil
        authenticator.apps.forget(appId)
        return try JSONResponse.make(
            stored ? .created : .accepted,
            RotatedAppKey(appId: appId, apiKey: apiKey ? newKey : nil, clientSigningKey: apiKey ? nil : newKey, previousKeyRetiresAt: retiresAt))
    }
}
