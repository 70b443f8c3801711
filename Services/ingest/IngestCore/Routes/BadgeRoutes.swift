import Foundation
import Hummingbird
import NotifyModels
import NotifyStore

/// A user's badge number where the app's badge mode is `external` (API key):
/// `PUT`/`GET /v1/apps/{appId}/users/{userId}/badge` with `{"badge": n}`. The number is carried by the user's next
/// pushes (a push's own `push.badge` wins on that push).
struct BadgeRoutes: Sendable {
    let authenticator: Authenticator
    let visibility: WriteVisibility
    let store: any AppStore

    private struct Badge: Codable {
        var badge: Int?
    }

    func register(on router: Router<BasicRequestContext>) {
        router.put("/v1/apps/:appId/users/:userId/badge") { request, context in
            try await set(request, appId: try context.parameters.require("appId"), userId: try context.parameters.require("userId"))
        }
        router.get("/v1/apps/:appId/users/:userId/badge") { request, context in
            try await show(request, appId: try context.parameters.require("appId"), userId: try context.parameters.require("userId"))
        }
    }

    private func set(_ request: Request, appId: String, userId: String) async throws -> Response {
        let app = try await authenticator.requireAppServer(request, appId: appId, for: .publish)
        try requireExternal(app)
        let body = try await JSONResponse.decode(Badge.self, from: request)
        guard let badge = body.badge, (0...99_999).contains(badge) else {
            throw APIFailure(ValidationError.invalid("badge", "badge is required, between 0 and 99999"))
        }
        let at = Date()
        let stored = try await visibility.send(StorageCommand(action: .setExternalBadge(appId: appId, userId: userId, badge: badge, at: at))) { [store] in
            try await store.externalBadge(appId: appId, userId: userId) == badge ? true : nil
        } != nil
        return try JSONResponse.make(stored ? .ok : .accepted, Badge(badge: badge))
    }

    private func show(_ request: Request, appId: String, userId: String) async throws -> Response {
        let app = try await authenticator.requireAppServer(request, appId: appId, for: .read)
        try requireExternal(app)
        let badge = try await APIFailure.reading { try await store.externalBadge(appId: appId, userId: userId) }
        return try JSONResponse.make(.ok, Badge(badge: badge ?? 0))
    }

    private func requireExternal(_ app: AppDirectory.App) throws(APIFailure) {
        guard app.badgeMode.isExternal else {
            throw APIFailure(
                .conflict, code: "badge_mode_not_external",
                message: "the app's badge mode is \(app.badgeMode.rawValue): its badge is counted, not set (PATCH /v1/apps/{appId} with \"badgeMode\": \"external\" or \"externalIncludingBroadcasts\")",
                field: "badgeMode")
        }
    }
}
