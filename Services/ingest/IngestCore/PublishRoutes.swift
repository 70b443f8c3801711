import Foundation
import Hummingbird
import NotifyModels

/// `POST /v1/apps/{appId}/notifications` (API key): one notification or a batch; 202 once the broker confirmed.
struct PublishRoutes: Sendable {
    let authenticator: Authenticator
    let intake: NotificationIntake
    let sender: CommandSender

    func register(on router: Router<BasicRequestContext>) {
        router.post("/v1/apps/:appId/notifications") { request, context in
            try await publish(request, appId: try context.parameters.require("appId"))
        }
    }

    private func publish(_ request: Request, appId: String) async throws -> Response {
        _ = try await authenticator.requireAppServer(request, appId: appId)
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: JSONResponse.maximumBodyBytes)
        } catch {
            throw APIFailure(.contentTooLarge, code: "body_too_large", message: "the body may be at most \(JSONResponse.maximumBodyBytes) bytes")
        }
        let body = try PublishBody.decode(buffer.readableBytesView)
        let outcome = intake.accept(body.items, isBatch: body.isBatch, appId: appId, idempotencyKey: nil)
        try await sender.send(outcome.commands)
        if !body.isBatch {
            let result = outcome.results[0]
            if let id = result.id { return JSONResponse.make(.accepted, json: NotificationIntake.Outcome.acceptedJSON(id)) }
            throw APIFailure(.init(code: result.status), code: result.error?.code ?? "invalid", message: result.error?.message ?? "", field: result.error?.field)
        }
        return JSONResponse.make(outcome.acceptedCount > 0 ? .accepted : .badRequest, json: outcome.resultsJSON())
    }
}
