import Foundation
import HTTPTypes
import Hummingbird
import NotifyModels

/// `POST /v1/apps/{appId}/notifications` (API key): one notification or a batch; 202 once the broker confirmed. The
/// contract (limits, errors, idempotency) is `PublishContract`'s, the same as over AMQP; the steps around it
/// (key, backlog, rate limits) are `PublishAdmission`'s.
struct PublishRoutes: Sendable {
    let admission: PublishAdmission
    let contract: PublishContract

    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!

    func register(on router: Router<BasicRequestContext>) {
        router.post("/v1/apps/:appId/notifications") { request, context in
            try await publish(request, appId: try context.parameters.require("appId"))
        }
    }

    private func publish(_ request: Request, appId: String) async throws -> Response {
        let accepted = try await admission.admit(request, appId: appId) { body in
            try await contract.accept(
                body.readableBytesView, byteCount: body.readableBytes, appId: appId, idempotencyKey: request.headers[Self.idempotencyKey], via: .http)
        }
        return JSONResponse.make(.init(code: accepted.status), json: accepted.body)
    }
}
