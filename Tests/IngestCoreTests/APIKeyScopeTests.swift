import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NotifyModels
import Testing

@testable import IngestCore

/// Scoped API keys against every route of the app server's API, in-process: a key may do what its scope names and
/// is refused 403 naming Authorization on everything else (operator routes: 401, as for any API key).
@Suite struct APIKeyScopeTests {
    /// The app-server operations a publish key may make: deliver (in notify's words or Graph's) and modify notifications,
    /// set a user's badge.
    private static let publishOperations: Set<String> = [
        "POST /v1/apps/{appId}/notifications", "POST /v1/apps/{appId}/graph/users/{userId}/notifications", "PATCH /v1/apps/{appId}/notifications/{id}", "DELETE /v1/apps/{appId}/notifications/{id}",
        "PATCH /v1/apps/{appId}/users/{userId}/notifications/{appNotificationId}",
        "DELETE /v1/apps/{appId}/users/{userId}/notifications/{appNotificationId}", "PUT /v1/apps/{appId}/users/{userId}/badge",
    ]

    /// Every route under /v1/apps/{appId}, as `METHOD /path/{param}`, with the URI to call it by.
    private static func appRoutes() throws -> [(operation: String, method: HTTPRequest.Method, uri: String)] {
        let router = buildRouter(try RouteTesting().dependencies(logger: Logger(label: "api-key-scope-tests")))
        return router.routes.compactMap { route in
            // Parameters as the description writes them, {name}.
            let segments = route.path.description.split(separator: "/").map { segment in
                segment.hasPrefix(":") ? "{\(segment.dropFirst())}" : String(segment)
            }
            guard segments.count > 2, segments[0] == "v1", segments[1] == "apps", segments[2] == "{appId}" else { return nil }
            let operation = "\(route.method.rawValue) /" + segments.joined(separator: "/")
            let uri = segments.map { segment -> String in
                switch segment {
                case "{appId}": return RouteTesting.appId
                case "{id}", "{subscriptionId}": return "6b1f3a52-0c7e-4d8a-9b2e-5f4c3d2a1b09"
                case let parameter where parameter.hasPrefix("{"): return "x"
                default: return segment
                }
            }.reduce("") { $0 + "/" + $1 }
            return (operation, route.method, uri)
        }
    }

    private static func call(_ client: some TestClientProtocol, _ method: HTTPRequest.Method, _ uri: String, key: String) async throws -> TestResponse {
        try await client.execute(
            uri: uri, method: method, headers: [.authorization: "Bearer \(key)", .contentType: "application/json"], body: ByteBuffer(string: "{}"))
    }

    @Test("a publish key is refused 403 on every app-server operation but delivering and modifying notifications")
    func publishKeyOnlyPublishes() async throws {
        let routes = try Self.appRoutes()
        #expect(routes.count > 20)
        try await RouteTesting().run { client in
            for (operation, method, uri) in routes where !Self.publishOperations.contains(operation) {
                let response = try await Self.call(client, method, uri, key: "publish-key")
                #expect(response.status == .forbidden || response.status == .unauthorized, "\(operation): \(response.status)")
                if response.status == .forbidden {
                    let body = try ErrorBody(response)
                    #expect(body.error.code == "forbidden" && body.error.field == "Authorization", "\(operation)")
                }
            }
            // And it publishes.
            let published = try await client.execute(
                uri: "/v1/apps/\(RouteTesting.appId)/notifications", method: .post, headers: [.authorization: "Bearer publish-key"],
                body: ByteBuffer(string: #"{"userId":"alice","payload":{"rawContent":"x"}}"#))
            #expect(published.status == .accepted)
        }
    }

    @Test("a read key may not publish, change a notification or any setting, nor manage keys")
    func readKeyOnlyReads() async throws {
        let routes = try Self.appRoutes()
        try await RouteTesting().run { client in
            for (operation, method, uri) in routes where method != .get {
                let response = try await Self.call(client, method, uri, key: "read-key")
                #expect(response.status == .forbidden || response.status == .unauthorized, "\(operation): \(response.status)")
            }
        }
    }

    @Test("the key scopes allow what they name; admin allows everything")
    func scopes() {
        #expect(APIKeyScope.admin.allows(.publish) && APIKeyScope.admin.allows(.read) && APIKeyScope.admin.allows(.admin))
        #expect(APIKeyScope.publish.allows(.publish) && !APIKeyScope.publish.allows(.read) && !APIKeyScope.publish.allows(.admin))
        #expect(APIKeyScope.read.allows(.read) && !APIKeyScope.read.allows(.publish) && !APIKeyScope.read.allows(.admin))
        #expect(APIKeyAccess.full.allows(.admin))
    }

    @Test("a scoped key's creation is checked, naming the field")
    func creationChecked() async throws {
        try await RouteTesting().run { client in
            for (body, field) in [(#"{"name":"ci"}"#, "scope"), (#"{"scope":"publish"}"#, "name"), (#"{"scope":"root","name":"x"}"#, "scope")] {
                let response = try await client.execute(
                    uri: "/v1/apps/\(RouteTesting.appId)/api-keys", method: .post, headers: [.authorization: "Bearer api-key"], body: ByteBuffer(string: body))
                #expect(response.status == .badRequest, "\(body)")
                #expect(try ErrorBody(response).error.field == field, "\(body)")
            }
        }
    }
}
