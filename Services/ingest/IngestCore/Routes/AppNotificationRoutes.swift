import Foundation
import Hummingbird
import NotifyModels
import NotifyStore

/// The app server's handle on a stored notification (API key): read, change state, delete —
/// by id (`/notifications/{id}`) or by its own id (`/users/{userId}/notifications/{appNotificationId}`) —
/// and its delivery log (`/notifications/{id}/deliveries`, oldest first, in pages: `limit` (default 1,000, at most 10,000)
/// and the `pageToken` of the page before), or its summary (`/notifications/{id}/deliveries/summary`); and the app's
/// delivery log across its notifications from a time on (`/deliveries?since=`, default the last hour), paged the same way.
struct AppNotificationRoutes: Sendable {
    let authenticator: Authenticator
    let deliveryLog: any DeliveryLogStore
    let changer: StateChanger

    /// How far back the app's delivery log starts when the request gives no `since`.
    static let defaultDeliveryLookback: TimeInterval = 3600

    func register(on router: Router<BasicRequestContext>) {
        router.get("/v1/apps/:appId/notifications/:id/deliveries") { request, context in
            let (appId, id) = try await target(request, context, for: .read)
            return try await deliveries(request, appId: appId, notificationId: id, since: nil)
        }
        router.get("/v1/apps/:appId/deliveries") { request, context in
            let appId = try context.parameters.require("appId")
            _ = try await authenticator.requireAppServer(request, appId: appId, for: .read)
            let since = try ReaderQuery.timestamp(request, "since") ?? Date().addingTimeInterval(-Self.defaultDeliveryLookback)
            return try await deliveries(request, appId: appId, notificationId: nil, since: since)
        }
        router.get("/v1/apps/:appId/notifications/:id/deliveries/summary") { request, context in
            let (appId, id) = try await target(request, context, for: .read)
            do {
                return try JSONResponse.make(.ok, try await deliveryLog.deliverySummary(appId: appId, notificationId: id))
            } catch {
                throw APIFailure.databaseUnavailable
            }
        }
        for path in ["/v1/apps/:appId/notifications/:id", "/v1/apps/:appId/users/:userId/notifications/:appNotificationId"] {
            router.get(RouterPath(path)) { request, context in
                let (appId, id) = try await target(request, context, for: .read)
                return try await namingTheCallersID(context) {
                    try JSONResponse.make(.ok, try await changer.activeNotification(appId: appId, id: id, userId: nil))
                }
            }
            router.patch(RouterPath(path)) { request, context in
                let (appId, id) = try await target(request, context, for: .publish)
                let body = try await JSONResponse.decode(StateChangeRequest.self, from: request)
                return try await namingTheCallersID(context) {
                    try await changer.change(appId: appId, id: id, userId: nil, request: body, delete: false, origin: nil)
                }
            }
            router.delete(RouterPath(path)) { request, context in
                let (appId, id) = try await target(request, context, for: .publish)
                return try await namingTheCallersID(context) {
                    try await changer.change(appId: appId, id: id, userId: nil, request: nil, delete: true, origin: nil)
                }
            }
        }
    }

    /// A page of a delivery log: one notification's, or the app's from `since` on.
    private func deliveries(_ request: Request, appId: String, notificationId: UUID?, since: Date?) async throws -> Response {
        let limit = try ReaderQuery.limit(request, default: 1000, maximum: 10_000)
        let pageToken = request.uri.queryParameters.get("pageToken").map { String($0) }
        return try await APIFailure.reading {
            try JSONResponse.make(
                .ok, try await deliveryLog.deliveries(appId: appId, notificationId: notificationId, since: since, limit: limit, pageToken: pageToken))
        }
    }

    /// Runs `answer`; on the path that names a notification by the app's own id, a notification not found is answered
    /// with that id and its field (`appNotificationId`), not the notification id derived from it, which the caller never sent.
    private func namingTheCallersID(
        _ context: BasicRequestContext, _ answer: () async throws -> Response
    ) async throws -> Response {
        do {
            return try await answer()
        } catch let failure as APIFailure where failure.body.error.code == "notification_not_found" {
            guard let appNotificationId = context.parameters.get("appNotificationId") else { throw failure }
            let userId = context.parameters.get("userId") ?? ""
            throw APIFailure(
                .notFound, code: failure.body.error.code,
                message: "no active notification with appNotificationId \(appNotificationId) for user \(userId)", field: "appNotificationId")
        }
    }

    private func target(
        _ request: Request, _ context: BasicRequestContext, for permission: APIKeyScope
    ) async throws -> (appId: String, id: UUID) {
        let appId = try context.parameters.require("appId")
        _ = try await authenticator.requireAppServer(request, appId: appId, for: permission)
        if let appNotificationId = context.parameters.get("appNotificationId") {
            let userId = try context.parameters.require("userId")
            return (appId, DeterministicID.notificationID(appId: appId, userId: userId, appNotificationId: appNotificationId))
        }
        return (appId, try ReaderQuery.uuid(try context.parameters.require("id"), field: "id"))
    }
}
