import Foundation
import HTTPTypes
import Hummingbird
import NotifyModels

/// `POST /v1/apps/{appId}/notifications` (API key): one notification or a batch; 202 once the broker confirmed. The
/// contract (limits, errors, idempotency) is `PublishContract`'s, the same as over AMQP.
struct PublishRoutes: Sendable {
    let authenticator: Authenticator
    let contract: PublishContract
    let sender: CommandSender
    let limiter: PublishRateLimiter
    let backlog: PipelineBacklog

    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!

    func register(on router: Router<BasicRequestContext>) {
        router.post("/v1/apps/:appId/notifications") { request, context in
            try await publish(request, appId: try context.parameters.require("appId"))
        }
    }

    private func publish(_ request: Request, appId: String) async throws -> Response {
        let app = try await authenticator.requireAppServer(request, appId: appId, for: .publish)
        // The request first, before its body is read: under overload, refusing must stay cheap.
        if let refusal = backlog.refusal() { throw refusal }
        if let wait = limiter.admit(appId: appId, limit: app.rateLimit, requests: 1, notifications: 0) {
            throw APIFailure.rateLimited(appId: appId, limit: limiter.limit(for: app.rateLimit), retryAfterSeconds: wait)
        }
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: PublishContract.maximumBodyBytes)
        } catch {
            throw APIFailure.bodyTooLarge
        }
        let accepted = try await contract.accept(
            buffer.readableBytesView, byteCount: buffer.readableBytes, appId: appId, idempotencyKey: request.headers[Self.idempotencyKey], via: .http)
        if let wait = limiter.admit(appId: appId, limit: app.rateLimit, requests: 0, notifications: accepted.commands.count) {
            throw APIFailure.rateLimited(appId: appId, limit: limiter.limit(for: app.rateLimit), retryAfterSeconds: wait)
        }
        try await sender.send(accepted.commands)
        return JSONResponse.make(.init(code: accepted.status), json: accepted.body)
    }
}
