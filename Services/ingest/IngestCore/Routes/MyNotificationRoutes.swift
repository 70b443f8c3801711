import Foundation
import HTTPTypes
import Hummingbird
import NotifyModels
import NotifyStore

/// A device's view of its user's notifications (user token): changes since a cursor and history (from the standby when
/// there is one), one notification, and state changes that reach the user's other devices.
struct MyNotificationRoutes: Sendable {
    let authenticator: Authenticator
    let reader: any NotificationStore
    let feed: LagTolerantReads
    let changer: StateChanger
    /// Records how far a device synced (for visual fallbacks).
    let sender: CommandSender

    static let subscriptionHeader = HTTPField.Name("X-Subscription-Id")!

    func register(on router: Router<BasicRequestContext>) {
        router.get("/v1/me/notifications/changes") { request, _ in try await changes(request) }
        router.get("/v1/me/notifications") { request, _ in try await history(request) }
        router.get("/v1/me/notifications/:id") { request, context in
            let user = try await authenticator.requireUser(request)
            let id = try ReaderQuery.uuid(try context.parameters.require("id"), field: "id")
            let found: NotificationView?
            do {
                found = try await reader.notification(appId: user.appId, id: id, userId: user.userId)
            } catch {
                throw APIFailure.databaseUnavailable
            }
            guard let view = found else {
                throw APIFailure(.notFound, code: "notification_not_found", message: "no notification with id \(id)", field: "id")
            }
            return try JSONResponse.make(.ok, view)
        }
        router.patch("/v1/me/notifications/:id") { request, context in
            let user = try await authenticator.requireUser(request)
            let id = try ReaderQuery.uuid(try context.parameters.require("id"), field: "id")
            let body = try await JSONResponse.decode(StateChangeRequest.self, from: request)
            return try await changer.change(appId: user.appId, id: id, userId: user.userId, request: body, delete: false, origin: try origin(request))
        }
        router.delete("/v1/me/notifications/:id") { request, context in
            let user = try await authenticator.requireUser(request)
            let id = try ReaderQuery.uuid(try context.parameters.require("id"), field: "id")
            return try await changer.change(appId: user.appId, id: id, userId: user.userId, request: nil, delete: true, origin: try origin(request))
        }
    }

    private func changes(_ request: Request) async throws -> Response {
        let user = try await authenticator.requireUser(request)
        let after = try cursor(request)
        let limit = try ReaderQuery.limit(request, default: 100, maximum: 1000)
        let filter = try ReaderQuery.filter(request)
        return try await APIFailure.reading {
            let page = try await feed.read("changes") { reader in
                try await reader.changes(appId: user.appId, userId: user.userId, after: after, limit: limit, filter: filter)
            }
            try await recordSync(of: page, by: try origin(request), user: user)
            return try JSONResponse.make(.ok, page)
        }
    }

    private func history(_ request: Request) async throws -> Response {
        let user = try await authenticator.requireUser(request)
        let filter = try ReaderQuery.filter(request)
        let limit = try ReaderQuery.limit(request, default: 50, maximum: 500)
        let pageToken = request.uri.queryParameters.get("pageToken").map { String($0) }
        return try await APIFailure.reading {
            let page = try await feed.read("history") { reader in
                try await reader.history(appId: user.appId, userId: user.userId, filter: filter, limit: limit, pageToken: pageToken)
            }
            return try JSONResponse.make(.ok, page)
        }
    }

    private func cursor(_ request: Request) throws(APIFailure) -> SyncPosition {
        do {
            return try SyncCursor.decode(request.uri.queryParameters.get("cursor").map { String($0) })
        } catch {
            throw APIFailure(error)
        }
    }

    /// A device that names itself (`X-Subscription-Id`) and reads a new notification with raw content and an alert to
    /// show (visual content, or the push's own title or body; it reached the device as a shoulder tap, its alert held
    /// back as a visual fallback): storage records how far it synced, so the fallback is not sent. Best effort: if it
    /// is not recorded, the device gets the alert too.
    private func recordSync(of page: ChangePage, by device: UUID?, user: Authenticator.User) async throws {
        guard let device else { return }
        let reached = page.changes.lazy.filter { change in
            change.kind == .created && change.broadcastSequence == nil && change.notification.eventSource == nil
                && change.notification.payload?.rawContent != nil
                && (change.notification.payload?.visualContent != nil || change.notification.push?.hasAlertText == true)
        }.map(\.sequence).max()
        guard let reached else { return }
        try? await sender.send([
            StorageCommand(action: .recordDeviceSync(appId: user.appId, userId: user.userId, subscriptionId: device, sequence: reached)),
        ])
    }

    private func origin(_ request: Request) throws(APIFailure) -> UUID? {
        guard let header = request.headers[Self.subscriptionHeader] else { return nil }
        return try ReaderQuery.uuid(header, field: "X-Subscription-Id")
    }
}
