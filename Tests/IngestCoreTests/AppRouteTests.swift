import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NotifyModels
import NotifyStore
import NotifyStoreTesting
import Testing

@testable import IngestCore

/// The operator's and app server's calls that change an app and answer what was stored (apps, settings, keys, badges,
/// poll sources, webhooks), in-process: storage's part played by `MemoryStorage`.
@Suite struct AppRouteTests {
    private static let appPath = "/v1/apps/\(RouteTesting.appId)"
    private struct Created: Decodable {
        var appId: String
        var apiKey: String
        var clientSigningKey: String
    }

    @Test("the operator creates an app (201 with its keys, once), lists and shows it, changes its settings (answered as stored), rotates its API key, and deletes it (204)")
    func appLifecycle() async throws {
        let testing = RouteTesting()
        try await testing.run { client in
            let created = try await client.execute(
                uri: "/v1/apps", method: .post, headers: RouteTesting.operatorHeaders, body: ByteBuffer(string: #"{"name":"Shop","badgeMode":"external"}"#))
            #expect(created.status == .created)
            let app = try RouteTesting.decode(Created.self, created)
            #expect(created.headers[.location] == "/v1/apps/\(app.appId)")

            let shown = try RouteTesting.decode(AppView.self, try await client.execute(uri: "/v1/apps/\(app.appId)", method: .get, headers: RouteTesting.operatorHeaders))
            #expect(shown.name == "Shop" && shown.badgeMode == "external")
            struct Page: Decodable { var apps: [AppView]; var nextPageToken: String? }
            let page = try RouteTesting.decode(Page.self, try await client.execute(uri: "/v1/apps?limit=1000", method: .get, headers: RouteTesting.operatorHeaders))
            #expect(page.apps.map(\.appId).contains(app.appId))

            let changed = try await client.execute(
                uri: "/v1/apps/\(app.appId)", method: .patch, headers: RouteTesting.operatorHeaders,
                body: ByteBuffer(string: #"{"badgeMode":"unread","rateLimit":{"requestsPerSecond":50}}"#))
            #expect(changed.status == .ok)
            let settled = try RouteTesting.decode(AppView.self, try await client.execute(uri: "/v1/apps/\(app.appId)", method: .get, headers: RouteTesting.operatorHeaders))
            #expect(settled.badgeMode == "unread" && settled.rateLimit.requestsPerSecond == 50)
            let badLimit = try await client.execute(
                uri: "/v1/apps/\(app.appId)", method: .patch, headers: RouteTesting.operatorHeaders, body: ByteBuffer(string: #"{"rateLimit":{"requestsPerSecond":0}}"#))
            #expect(try ErrorBody(badLimit).error.field == "rateLimit.requestsPerSecond")

            // The new key works at once; the old one still does, until its overlap ends.
            let rotated = try await client.execute(
                uri: "/v1/apps/\(app.appId)/api-key", method: .post, headers: RouteTesting.operatorHeaders, body: ByteBuffer(string: #"{"overlapSeconds":60}"#))
            #expect(rotated.status == .created)
            struct Rotated: Decodable { var apiKey: String? }
            let newKey = try #require(try RouteTesting.decode(Rotated.self, rotated).apiKey)
            for key in [newKey, app.apiKey] {
                let keys = try await client.execute(uri: "/v1/apps/\(app.appId)/api-keys", method: .get, headers: [.authorization: "Bearer \(key)"])
                #expect(keys.status == .ok, "key \(key == newKey ? "new" : "old") refused")
            }

            let deleted = try await client.execute(uri: "/v1/apps/\(app.appId)", method: .delete, headers: RouteTesting.operatorHeaders)
            #expect(deleted.status == .noContent)
            let gone = try await client.execute(uri: "/v1/apps/\(app.appId)", method: .get, headers: RouteTesting.operatorHeaders)
            #expect(gone.status == .notFound)
            #expect(try ErrorBody(gone).error.field == "appId")
        }
    }

    @Test("the operator rotates an app's client signing key (201, the new key answered once): user tokens signed with it are accepted, and with the replaced one until its overlap ends")
    func clientSigningKeyRotation() async throws {
        let testing = RouteTesting()
        try await testing.run { client in
            let app = try RouteTesting.decode(Created.self, try await client.execute(
                uri: "/v1/apps", method: .post, headers: RouteTesting.operatorHeaders, body: ByteBuffer(string: #"{"name":"Shop"}"#)))
            // Whether the app's user alice, with a token signed by `key`, is let in.
            @Sendable func acceptsTokens(signedBy key: String) async throws -> Bool {
                let token = try await UserToken.mint(userId: "alice", appId: app.appId, signingKey: key)
                let response = try await client.execute(uri: "/v1/me/subscriptions", method: .get, headers: [.authorization: "Bearer \(token)"])
                return response.status == .ok
            }
            #expect(try await acceptsTokens(signedBy: app.clientSigningKey))

            let rotate = "/v1/apps/\(app.appId)/client-signing-key"
            let first = try await client.execute(uri: rotate, method: .post, headers: RouteTesting.operatorHeaders, body: ByteBuffer(string: #"{"overlapSeconds":60}"#))
            #expect(first.status == .created)
            let rotated = try RouteTesting.decode(RotatedAppKey.self, first)
            let second = try #require(rotated.clientSigningKey)
            #expect(rotated.apiKey == nil && second != app.clientSigningKey)
            #expect(abs(rotated.previousKeyRetiresAt.timeIntervalSinceNow - 60) < 5)
            #expect(try await acceptsTokens(signedBy: second))
            #expect(try await acceptsTokens(signedBy: app.clientSigningKey), "the replaced key is refused during its overlap")

            // Without an overlap the replaced key is refused at once.
            let third = try #require(try RouteTesting.decode(RotatedAppKey.self, try await client.execute(
                uri: rotate, method: .post, headers: RouteTesting.operatorHeaders, body: ByteBuffer(string: #"{"overlapSeconds":0}"#))).clientSigningKey)
            #expect(try await acceptsTokens(signedBy: third))
            #expect(try await !acceptsTokens(signedBy: second))
            let refused = try await client.execute(uri: rotate, method: .post, headers: RouteTesting.apiKeyHeaders)
            #expect(refused.status == .unauthorized)
        }
    }

    @Test("scoped API keys: created (the secret answered once), listed newest first without it, revoked; a read key cannot create one")
    func scopedKeys() async throws {
        let testing = RouteTesting()
        try await testing.run { client in
            let created = try await client.execute(
                uri: "\(Self.appPath)/api-keys", method: .post, headers: RouteTesting.apiKeyHeaders, body: ByteBuffer(string: #"{"scope":"publish","name":"billing"}"#))
            #expect(created.status == .created)
            let key = try RouteTesting.decode(APIKeyView.self, created)
            #expect(key.apiKey != nil && key.scope == .publish)
            struct Keys: Decodable { var apiKeys: [APIKeyView] }
            let listed = try RouteTesting.decode(Keys.self, try await client.execute(uri: "\(Self.appPath)/api-keys", method: .get, headers: RouteTesting.apiKeyHeaders))
            #expect(listed.apiKeys.map(\.keyId) == [key.keyId] && listed.apiKeys.allSatisfy { $0.apiKey == nil })
            let revoked = try await client.execute(uri: "\(Self.appPath)/api-keys/\(key.keyId)", method: .delete, headers: RouteTesting.apiKeyHeaders)
            #expect(revoked.status == .noContent)
            let after = try RouteTesting.decode(Keys.self, try await client.execute(uri: "\(Self.appPath)/api-keys", method: .get, headers: RouteTesting.apiKeyHeaders))
            #expect(after.apiKeys.first?.revokedAt != nil)
            let byReadKey = try await client.execute(
                uri: "\(Self.appPath)/api-keys", method: .post, headers: [.authorization: "Bearer read-key"], body: ByteBuffer(string: #"{"scope":"read","name":"x"}"#))
            #expect(byReadKey.status == .forbidden)
        }
    }

    @Test("an external badge is set (answered as stored) and read back; an app that counts its badge refuses it (409)")
    func externalBadge() async throws {
        let testing = RouteTesting()
        try await testing.run { client in
            let path = "/v1/apps/\(FixedApp.externalBadgeAppId)/users/alice/badge"
            let set = try await client.execute(uri: path, method: .put, headers: RouteTesting.apiKeyHeaders, body: ByteBuffer(string: #"{"badge":7}"#))
            #expect(set.status == .ok)
            struct Badge: Decodable { var badge: Int? }
            #expect(try RouteTesting.decode(Badge.self, try await client.execute(uri: path, method: .get, headers: RouteTesting.apiKeyHeaders)).badge == 7)
            #expect(try RouteTesting.decode(Badge.self, try await client.execute(uri: path.replacingOccurrences(of: "alice", with: "bob"), method: .get, headers: RouteTesting.apiKeyHeaders)).badge == 0)
            let counted = try await client.execute(uri: "\(Self.appPath)/users/alice/badge", method: .put, headers: RouteTesting.apiKeyHeaders, body: ByteBuffer(string: #"{"badge":1}"#))
            #expect(counted.status == .conflict)
            let tooBig = try await client.execute(uri: path, method: .put, headers: RouteTesting.apiKeyHeaders, body: ByteBuffer(string: #"{"badge":100000}"#))
            #expect(try ErrorBody(tooBig).error.field == "badge")
        }
    }

    @Test("a poll source and a webhook are put (201, then 200), shown, and deleted (204); the webhook's secret is answered only when new; its attempts are listed newest first")
    func pollSourcesAndWebhooks() async throws {
        let testing = RouteTesting()
        try await testing.run { client in
            let source = "\(Self.appPath)/poll-sources/feed"
            let put = try await client.execute(uri: source, method: .put, headers: RouteTesting.apiKeyHeaders, body: ByteBuffer(string: #"{"url":"https://8.8.8.8/feed","intervalSeconds":60}"#))
            #expect(put.status == .created)
            let again = try await client.execute(uri: source, method: .put, headers: RouteTesting.apiKeyHeaders, body: ByteBuffer(string: #"{"url":"https://8.8.8.8/feed2","intervalSeconds":30}"#))
            #expect(again.status == .ok)
            #expect(try RouteTesting.decode(PollSourceView.self, again).intervalSeconds == 30)
            struct Sources: Decodable { var pollSources: [PollSourceView] }
            let listed = try RouteTesting.decode(Sources.self, try await client.execute(uri: "\(Self.appPath)/poll-sources", method: .get, headers: RouteTesting.apiKeyHeaders))
            #expect(listed.pollSources.map(\.url) == ["https://8.8.8.8/feed2"])
            #expect(try await client.execute(uri: source, method: .delete, headers: RouteTesting.apiKeyHeaders).status == .noContent)
            #expect(try await client.execute(uri: source, method: .delete, headers: RouteTesting.apiKeyHeaders).status == .notFound)

            let hook = "\(Self.appPath)/webhook"
            let created = try await client.execute(uri: hook, method: .put, headers: RouteTesting.apiKeyHeaders, body: ByteBuffer(string: #"{"url":"https://8.8.8.8/hook"}"#))
            #expect(created.status == .created)
            #expect(try RouteTesting.decode(WebhookView.self, created).secret?.hasPrefix("whsec_") == true)
            let moved = try await client.execute(uri: hook, method: .put, headers: RouteTesting.apiKeyHeaders, body: ByteBuffer(string: #"{"url":"https://8.8.4.4/hook"}"#))
            #expect(moved.status == .ok)
            #expect(try RouteTesting.decode(WebhookView.self, moved).secret == nil, "the secret is answered only when it is new")
            let shown = try RouteTesting.decode(WebhookView.self, try await client.execute(uri: hook, method: .get, headers: RouteTesting.apiKeyHeaders))
            #expect(shown.url == "https://8.8.4.4/hook")

            let event = UUID()
            for attempt in 1...2 {
                testing.storage.apps.addWebhookAttempt(WebhookAttempt(
                    eventId: event, appId: RouteTesting.appId, type: "subscription.created", attempt: attempt, status: attempt == 1 ? 503 : 200,
                    result: attempt == 1 ? "retrying" : "delivered", reason: nil, at: Date().addingTimeInterval(Double(attempt))))
            }
            struct Log: Decodable { var deliveries: [WebhookAttempt] }
            let log = try RouteTesting.decode(Log.self, try await client.execute(uri: "\(hook)/deliveries", method: .get, headers: RouteTesting.apiKeyHeaders))
            #expect(log.deliveries.map(\.result) == ["delivered", "retrying"])
            #expect(try await client.execute(uri: hook, method: .delete, headers: RouteTesting.apiKeyHeaders).status == .noContent)
            #expect(try await client.execute(uri: hook, method: .get, headers: RouteTesting.apiKeyHeaders).status == .notFound)
        }
    }
}
