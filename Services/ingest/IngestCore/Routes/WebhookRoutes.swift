import Foundation
import Hummingbird
import NotifyModels
import NotifyStore

/// `PUT`/`GET`/`DELETE /v1/apps/{appId}/webhook` and `GET /v1/apps/{appId}/webhook/deliveries` (API key): where the
/// service POSTs an app's events (`WebhookDispatcher`), and every attempt, newest first.
struct WebhookRoutes: Sendable {
    let authenticator: Authenticator
    let visibility: WriteVisibility
    let store: any AppStore
    /// Seals a new webhook secret before it leaves this process.
    let keyring: SecretKeyring
    let outbound: OutboundURLCheck

    private struct Log: Encodable {
        var deliveries: [WebhookAttempt]
    }

    func register(on router: Router<BasicRequestContext>) {
        router.put("/v1/apps/:appId/webhook") { request, context in try await put(request, appId: try context.parameters.require("appId")) }
        router.get("/v1/apps/:appId/webhook") { request, context in
            let appId = try context.parameters.require("appId")
            _ = try await authenticator.requireAppServer(request, appId: appId, for: .read)
            guard let stored = try await stored(appId) else { throw Self.notFound }
            return try JSONResponse.make(.ok, WebhookView(url: stored.url, events: stored.events, secret: nil))
        }
        router.delete("/v1/apps/:appId/webhook") { request, context in
            let appId = try context.parameters.require("appId")
            _ = try await authenticator.requireAppServer(request, appId: appId, for: .admin)
            guard try await stored(appId) != nil else { throw Self.notFound }
            let gone = try await visibility.send(StorageCommand(action: .deleteWebhook(appId: appId))) { [store] in
                try await store.webhook(appId: appId) == nil ? true : nil
            }
            return Response(status: gone != nil ? .noContent : .accepted)
        }
        router.get("/v1/apps/:appId/webhook/deliveries") { request, context in
            let appId = try context.parameters.require("appId")
            _ = try await authenticator.requireAppServer(request, appId: appId, for: .read)
            let limit = min(max(request.uri.queryParameters.get("limit").flatMap(Int.init) ?? 100, 1), 1000)
            return try JSONResponse.make(.ok, Log(deliveries: try await attempts(appId, limit: limit)))
        }
    }

    private func put(_ request: Request, appId: String) async throws -> Response {
        _ = try await authenticator.requireAppServer(request, appId: appId, for: .admin)
        let body = try await JSONResponse.decode(WebhookRequest.self, from: request)
        let (url, events): (String, [WebhookEventType])
        do {
            (url, events) = try body.validated()
        } catch {
            throw APIFailure(error)
        }
        try await outbound.requireCallable(url, field: "url")
        let existing = try await stored(appId)
        let newSecret = existing == nil || body.rotateSecret == true ? "whsec_" + OperatorRoutes.randomToken(bytes: 32) : nil
        // The stored secret is kept as it is stored (sealed); a new one is sealed here.
        guard let secret = newSecret.map({ keyring.seal($0, for: .webhookSecret(appId: appId)) }) ?? existing?.secret else {
            throw APIFailure.databaseUnavailable
        }
        let record = WebhookRecord(appId: appId, url: url, events: events.map(\.rawValue), secret: secret, createdAt: Date())
        _ = try await visibility.send(StorageCommand(action: .putWebhook(record))) { [store] in
            try await store.webhook(appId: appId).flatMap { $0.url == url && $0.sealedSecret == secret ? $0 : nil }
        }
        return try JSONResponse.make(existing == nil ? .created : .ok, WebhookView(url: url, events: events, secret: newSecret))
    }

    private func stored(_ appId: String) async throws(APIFailure) -> (url: String, events: [WebhookEventType], secret: String)? {
        try await APIFailure.reading { try await store.webhook(appId: appId) }.map { ($0.url, $0.events, $0.sealedSecret) }
    }

    private func attempts(_ appId: String, limit: Int) async throws(APIFailure) -> [WebhookAttempt] {
        try await APIFailure.reading { try await store.webhookAttempts(appId: appId, limit: limit) }
    }

    private static let notFound = APIFailure(.notFound, code: "webhook_not_found", message: "this app has no webhook", field: "appId")
}
