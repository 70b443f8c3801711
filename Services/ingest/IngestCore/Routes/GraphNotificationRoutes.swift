import Foundation
import HTTPTypes
import Hummingbird
import NotifyModels

/// `POST /v1/apps/{appId}/graph/users/{userId}/notifications` (API key): Microsoft Graph's `POST /me/notifications`,
/// for an app server moving from Graph notifications. It changes its base URL (`https://graph.microsoft.com/beta` to
/// `{notify}/v1/apps/{appId}/graph`), its token (the app's API key, still `Authorization: Bearer`) and the user
/// segment (`/me` to `/users/{userId}`, Graph's own spelling for a named user: an app's key acts for no user, and
/// `X-UNS-ID` is not read). The body is Graph's (`GraphNotification`), published as notify's own publish to `userId`
/// is (`PublishAdmission`, `PublishContract`: the same validation, limits and storage command); the answer is Graph's:
/// 201 with the notification resource and the id notify gave it. Graph's refusal of `If-Modified-Since` and
/// `If-Range` is kept (400 naming the header).
struct GraphNotificationRoutes: Sendable {
    let admission: PublishAdmission
    let contract: PublishContract

    /// The request headers Graph's create refuses.
    static let unsupportedHeaders: [HTTPField.Name] = [.ifModifiedSince, .ifRange]

    func register(on router: Router<BasicRequestContext>) {
        router.post("/v1/apps/:appId/graph/users/:userId/notifications") { request, context in
            try await publish(request, appId: try context.parameters.require("appId"), userId: try context.parameters.require("userId"))
        }
    }

    private func publish(_ request: Request, appId: String, userId: String) async throws -> Response {
        var notification: GraphNotification?
        let accepted = try await admission.admit(request, appId: appId) { body in
            for header in Self.unsupportedHeaders where request.headers[header] != nil {
                throw APIFailure(
                    .badRequest, code: "unsupported_header", message: "the \(header.rawName) header is not supported, as Graph does not support it",
                    field: header.rawName)
            }
            let read = try GraphNotification.read(body.readableBytesView, for: userId)
            notification = read
            return try await contract.accept(read.request, appId: appId)
        }
        guard let notification, let stored = accepted.userNotification else {
            throw APIFailure(.internalServerError, code: "internal", message: "the notification was accepted but not as one user's")
        }
        return JSONResponse.make(.created, json: notification.resourceJSON(id: stored.notificationId, stored: stored.content))
    }
}
