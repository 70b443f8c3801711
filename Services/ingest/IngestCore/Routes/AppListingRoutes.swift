import Foundation
import Hummingbird
import NotifyModels
import NotifyStore

/// `GET /v1/apps` and `GET /v1/apps/{appId}` (operator token): the apps as stored, with their settings, which
/// providers have credentials (and whether a provider refused them), broker users and rotation overlaps; never a secret.
struct AppListingRoutes: Sendable {
    let authenticator: Authenticator
    let store: any AppStore

    func register(on router: Router<BasicRequestContext>) {
        router.get("/v1/apps") { request, _ in
            try authenticator.requireOperator(request)
            let limit = request.uri.queryParameters.get("limit").map { Int($0) ?? 0 } ?? 100
            guard (1...1000).contains(limit) else {
                throw APIFailure(ValidationError.invalid("limit", "limit must be 1 to 1000"))
            }
            let after = request.uri.queryParameters.get("pageToken").map { String($0) }
            let apps = try await apps(after: after, limit: limit + 1, appId: nil)
            return try JSONResponse.make(
                .ok, AppPage(apps: Array(apps.prefix(limit)), nextPageToken: apps.count > limit ? apps[limit - 1].appId : nil))
        }
        router.get("/v1/apps/:appId") { request, context in
            try authenticator.requireOperator(request)
            let appId = try context.parameters.require("appId")
            guard let app = try await apps(after: nil, limit: 1, appId: appId).first else {
                throw APIFailure(.notFound, code: "app_not_found", message: "no app with id \(appId)", field: "appId")
            }
            return try JSONResponse.make(.ok, app)
        }
    }

    /// Apps in id order after `after` (or the one with `appId`), with their providers and broker users.
    private func apps(after: String?, limit: Int, appId: String?) async throws(APIFailure) -> [AppView] {
        try await APIFailure.reading { try await store.apps(after: after, limit: limit, appId: appId) }
    }
}
