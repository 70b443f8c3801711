import Foundation
import Hummingbird
import NotifyModels
import NotifyStore

/// `PUT`/`GET`/`DELETE /v1/apps/{appId}/poll-sources[/{name}]` (API key): back ends `PollIngestion` polls for the app.
struct PollSourceRoutes: Sendable {
    let authenticator: Authenticator
    let visibility: WriteVisibility
    let store: any AppStore
    /// Seals the Authorization header before it leaves this process.
    let keyring: SecretKeyring
    let outbound: OutboundURLCheck

    private struct Listing: Encodable {
        var pollSources: [PollSourceView]
    }

    func register(on router: Router<BasicRequestContext>) {
        router.put("/v1/apps/:appId/poll-sources/:name") { request, context in
            try await put(request, appId: try context.parameters.require("appId"), name: try context.parameters.require("name"))
        }
        router.get("/v1/apps/:appId/poll-sources") { request, context in
            let appId = try context.parameters.require("appId")
            _ = try await authenticator.requireAppServer(request, appId: appId, for: .read)
            return try JSONResponse.make(.ok, Listing(pollSources: try await sources(appId: appId, name: nil)))
        }
        router.delete("/v1/apps/:appId/poll-sources/:name") { request, context in
            let (appId, name) = (try context.parameters.require("appId"), try context.parameters.require("name"))
            _ = try await authenticator.requireAppServer(request, appId: appId, for: .admin)
            guard try await !sources(appId: appId, name: name).isEmpty else { throw Self.notFound(name) }
            let gone = try await visibility.send(StorageCommand(action: .deletePollSource(appId: appId, name: name))) { [store] in
                try await store.pollSources(appId: appId, named: name).isEmpty ? true : nil
            }
            return Response(status: gone != nil ? .noContent : .accepted)
        }
    }

    private func put(_ request: Request, appId: String, name: String) async throws -> Response {
        _ = try await authenticator.requireAppServer(request, appId: appId, for: .admin)
        guard EventSourceRequest.isValidName(name) else {
            throw APIFailure(ValidationError.invalid("name", "a poll source's name is 1 to 100 characters of A-Z a-z 0-9 . _ : -"))
        }
        let body = try await JSONResponse.decode(PollSourceRequest.self, from: request)
        let (url, interval, authorization): (String, Int, String?)
        do {
            (url, interval, authorization) = try body.validated()
        } catch {
            throw APIFailure(error)
        }
        try await outbound.requireCallable(url, field: "url")
        let existed = try await !sources(appId: appId, name: name).isEmpty
        let record = PollSourceRecord(appId: appId, name: name, url: url, intervalSeconds: interval, authorization: authorization.map { keyring.seal($0, for: .pollSourceAuthorization(appId: appId, name: name)) }, createdAt: Date())
        _ = try await visibility.send(StorageCommand(action: .putPollSource(record))) { [store] in
            try await store.pollSources(appId: appId, named: name).first { $0.url == url && $0.intervalSeconds == interval }
        }
        let stored = try await sources(appId: appId, name: name).first
            ?? PollSourceView(name: name, url: url, intervalSeconds: interval, hasAuthorization: authorization != nil, createdAt: record.createdAt)
        return try JSONResponse.make(existed ? .ok : .created, stored)
    }

    private func sources(appId: String, name: String?) async throws(APIFailure) -> [PollSourceView] {
        try await APIFailure.reading { try await store.pollSources(appId: appId, named: name) }
    }

    private static func notFound(_ name: String) -> APIFailure {
        APIFailure(.notFound, code: "poll_source_not_found", message: "no poll source \(name) in this app", field: "name")
    }
}
