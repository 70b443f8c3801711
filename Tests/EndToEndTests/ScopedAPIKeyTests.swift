import Foundation
import NotifyModels
import NotifyTestSupport
import Testing

extension EndToEndTests {
    /// An app's scoped API keys on the running stack: a key that only publishes, one that only reads, listed without
    /// their secrets, with their last use, and revoked.
    @Suite("scoped API keys")
    struct ScopedAPIKeyTests {
        private struct Listing: Decodable {
            var apiKeys: [APIKeyView]
        }

        private static func create(_ scope: APIKeyScope, for app: TestApp) async throws -> APIKeyView {
            let answer = try await StackClient.send(
                .POST, "\(Stack.ingestURL)/v1/apps/\(app.appId)/api-keys", bearer: app.apiKey,
                json: StackClient.encode(APIKeyRequest(scope: scope, name: "e2e \(scope.rawValue)")))
            guard answer.status == 201 else { throw TestFailure("POST …/api-keys answered \(answer.status): \(answer.text)") }
            let created = try answer.decode(APIKeyView.self)
            if let key = created.apiKey { SecretsUsed.record([key]) }
            return created
        }

        @Test("a publish-only key publishes and is refused 403 on every other kind of operation; a read key reads and may not publish",
              .timeLimit(.minutes(2)))
        func scopesHold() async throws {
            let app = try await TestApp.create()
            let publisher = try await Self.create(.publish, for: app)
            let reader = try await Self.create(.read, for: app)
            let publishKey = try #require(publisher.apiKey), readKey = try #require(reader.apiKey)
            let userId = "scoped-\(uniqueSuffix())"
            _ = try await app.registerDevice(of: userId)

            let published = try await app.publish(NotificationRequest.alert(to: userId), apiKey: publishKey)
            #expect(published.status == 202, "\(published.text)")
            let app_ = "\(Stack.ingestURL)/v1/apps/\(app.appId)"
            let refusedToPublisher: [(StackClient.Method, String, (any Encodable)?)] = [
                (.GET, "\(app_)/deliveries", nil), (.GET, "\(app_)/webhook", nil), (.PUT, "\(app_)/webhook", WebhookRequest(url: "\(Stack.sandboxURL)/receivers/x")),
                (.GET, "\(app_)/event-sources", nil), (.POST, "\(app_)/event-sources", EventSourceRequest(name: "news")),
                (.GET, "\(app_)/poll-sources", nil), (.POST, "\(app_)/api-keys", APIKeyRequest(scope: .admin, name: "escalate")),
                (.GET, "\(app_)/api-keys", nil),
            ]
            for (method, url, body) in refusedToPublisher {
                let answer = try await StackClient.send(method, url, bearer: publishKey, json: try body.map { try StackClient.encode($0) })
                expectAPIError(answer, status: 403, code: "forbidden", field: "Authorization", "the publish key on \(method) \(url)")
            }
            let readable = try await StackClient.send(.GET, "\(app_)/deliveries", bearer: readKey)
            #expect(readable.status == 200, "\(readable.text)")
            expectAPIError(
                try await app.publish(NotificationRequest.alert(to: userId), apiKey: readKey), status: 403, code: "forbidden",
                field: "Authorization", "the read key publishing")

            // Listed without secrets, each with its last use (recorded within 10 s).
            var listing = Listing(apiKeys: [])
            let deadline = ContinuousClock.now + .seconds(40)
            repeat {
                listing = try await StackClient.send(.GET, "\(app_)/api-keys", bearer: app.apiKey).decode(Listing.self)
                if listing.apiKeys.allSatisfy({ $0.lastUsedAt != nil }) { break }
                try await Task.sleep(for: .seconds(1))
            } while ContinuousClock.now < deadline
            #expect(Set(listing.apiKeys.map(\.keyId)) == [publisher.keyId, reader.keyId])
            #expect(listing.apiKeys.allSatisfy { $0.apiKey == nil && $0.revokedAt == nil && $0.lastUsedAt != nil }, "\(listing.apiKeys)")

            // Revoked: refused from the next request, the app's own key unaffected.
            #expect(try await StackClient.send(.DELETE, "\(app_)/api-keys/\(publisher.keyId)", bearer: app.apiKey).status == 204)
            expectAPIError(
                try await app.publish(NotificationRequest.alert(to: userId), apiKey: publishKey), status: 401, field: "Authorization",
                "a revoked key")
            #expect(try await app.publish(NotificationRequest.alert(to: userId)).status == 202)
            expectAPIError(
                try await StackClient.send(.DELETE, "\(app_)/api-keys/key_0000000000000000", bearer: app.apiKey), status: 404,
                code: "api_key_not_found", field: "keyId", "an unknown key id")
        }

        @Test("a scoped key of one app is refused on another app's paths")
        func keyOfAnotherApp() async throws {
            let first = try await TestApp.create(), second = try await TestApp.create()
            let admin = try #require(try await Self.create(.admin, for: first).apiKey)
            expectAPIError(
                try await StackClient.send(.GET, "\(Stack.ingestURL)/v1/apps/\(second.appId)/api-keys", bearer: admin), status: 401, field: "Authorization",
                "another app's admin key")
        }
    }
}
