import Foundation
import NotifyModels
import NotifyStoreTesting
import Testing

extension EndToEndTests {
    @Suite("secrets at rest and key rotation")
    struct SecretsAtRestTests {
        private struct RotatedKey: Decodable {
            var apiKey: String?
            var clientSigningKey: String?
            var previousKeyRetiresAt: Date
        }

        private struct PollSource: Encodable {
            var url: String
            var intervalSeconds: Int
            var authorization: String
        }

        /// Every row stored for the app, as text, in each table that holds a secret.
        private static func storedRows(of appId: String) async throws -> String {
            try await Database.withClient { client in
                try await PlaintextSearch(client: client, logger: testLogger)
                    .rows(ofApp: appId, in: ["apps", "app_credentials", "app_webhooks", "poll_sources"]).joined(separator: "\n")
            }
        }

        @Test("no private key, signing key, webhook secret or poll Authorization is stored in plaintext, and pushes still go out with them")
        func nothingInPlaintext() async throws {
            let app = try await TestApp.create()
            let apnsKey = try await app.replaceAPNsKey()
            let wns = try await ProviderSandbox.wnsAppAndChannel()
            try await app.storeWNSCredentials(packageSid: wns.clientId, clientSecret: wns.clientSecret)
            let put = try await StackClient.send(
                .PUT, "\(Stack.ingestURL)/v1/apps/\(app.appId)/webhook", bearer: app.apiKey,
                json: StackClient.encode(WebhookRequest(url: "\(Stack.sandboxURL)/receivers/secrets-\(uniqueSuffix())")))
            let webhookSecret = try #require(try put.decode(WebhookView.self).secret)
            let pollAuthorization = "Bearer poll-\(uniqueSuffix())-\(randomHex(bytes: 16))"
            let poll = try await StackClient.send(
                .PUT, "\(Stack.ingestURL)/v1/apps/\(app.appId)/poll-sources/legacy", bearer: app.apiKey,
                json: StackClient.encode(PollSource(url: "\(Stack.sandboxURL)/feeds/none", intervalSeconds: 3600, authorization: pollAuthorization)))
            #expect(poll.status == 201, "\(poll.text)")
            // The PEM's base64 lines: how a key would appear however it was quoted.
            let keyLines = apnsKey.privateKey.split(separator: "\n").filter { !$0.hasPrefix("-----") }.map(String.init)
            let secrets = [app.apiKey, app.clientSigningKey, wns.clientSecret, webhookSecret, pollAuthorization] + keyLines
            SecretsUsed.record([wns.clientSecret, webhookSecret, pollAuthorization])

            let stored = try await Self.storedRows(of: app.appId)
            #expect(stored.contains("sealed:v1:"), "the rows were read")
            for secret in secrets {
                #expect(!stored.contains(secret), "a secret is stored in plaintext")
            }

            let user = "user-\(uniqueSuffix())"
            let device = try await app.registerDevice(of: user)
            #expect(try await app.publish(NotificationRequest.alert(to: user, title: "sealed credentials")).status == 202)
            let pushes = try await Sandbox.waitForDeliveries(to: device) { !$0.isEmpty }
            #expect(pushes.count == 1, "the push is signed with the key opened from its sealed form")
        }

        @Test("a rotated API key works at once on every request, and the replaced one until its overlap ends")
        func apiKeyRotation() async throws {
            let app = try await TestApp.create()
            let listing = "\(Stack.ingestURL)/v1/apps/\(app.appId)/event-sources"
            let rotated = try await StackClient.send(
                .POST, "\(Stack.ingestURL)/v1/apps/\(app.appId)/api-key", bearer: Stack.adminToken, json: #"{"overlapSeconds": 3}"#.data(using: .utf8)!)
            #expect(rotated.status == 201, "\(rotated.text)")
            let newKey = try #require(try rotated.decode(RotatedKey.self).apiKey)
            SecretsUsed.record([newKey])
            #expect(newKey != app.apiKey)
            #expect(try await StackClient.send(.GET, listing, bearer: newKey).status == 200)
            #expect(try await StackClient.send(.GET, listing, bearer: app.apiKey).status == 200, "the replaced key during the overlap")
            try await Task.sleep(for: .seconds(3.5))
            #expect(try await StackClient.send(.GET, listing, bearer: app.apiKey).status == 401, "the replaced key after it")
            #expect(try await StackClient.send(.GET, listing, bearer: newKey).status == 200)
            let bad = try await StackClient.send(
                .POST, "\(Stack.ingestURL)/v1/apps/\(app.appId)/api-key", bearer: Stack.adminToken, json: #"{"overlapSeconds": -1}"#.data(using: .utf8)!)
            #expect(bad.status == 400 && bad.text.contains("overlapSeconds"))
        }

        @Test("user tokens signed with a replaced client signing key are accepted until the overlap ends; the new key signs at once")
        func signingKeyRotation() async throws {
            let app = try await TestApp.create()
            let user = "user-\(uniqueSuffix())"
            let feed = "\(Stack.ingestURL)/v1/me/notifications"
            let oldToken = try await app.userToken(user)
            let rotated = try await StackClient.send(
                .POST, "\(Stack.ingestURL)/v1/apps/\(app.appId)/client-signing-key", bearer: Stack.adminToken,
                json: #"{"overlapSeconds": 3}"#.data(using: .utf8)!)
            #expect(rotated.status == 201, "\(rotated.text)")
            let newKey = try #require(try rotated.decode(RotatedKey.self).clientSigningKey)
            SecretsUsed.record([newKey])
            let newToken = try await UserToken.mint(userId: user, appId: app.appId, signingKey: newKey)
            #expect(try await StackClient.send(.GET, feed, bearer: newToken).status == 200)
            #expect(try await StackClient.send(.GET, feed, bearer: oldToken).status == 200, "the old key's token during the overlap")
            try await Task.sleep(for: .seconds(3.5))
            let refused = try await StackClient.send(.GET, feed, bearer: oldToken)
            #expect(refused.status == 401 && refused.text.contains("signature"), "after it: \(refused.text)")
            #expect(try await StackClient.send(.GET, feed, bearer: newToken).status == 200)
        }
    }
}

/// The secrets tests used, one per line in `$NOTIFY_STATE_DIR/secrets-used`: test.sh searches every log of the run
/// for them at the end.
enum SecretsUsed {
    static func record(_ secrets: [String]) {
        guard let directory = ProcessInfo.processInfo.environment["NOTIFY_STATE_DIR"] else { return }
        let lines = Array(secrets.filter { !$0.isEmpty && !$0.contains("\n") }.map { $0 + "\n" }.joined().utf8)
        // One append-mode write per call: lines of tests running side by side do not interleave.
        let file = open(directory + "/secrets-used", O_WRONLY | O_APPEND | O_CREAT, 0o600)
        guard file >= 0 else { return }
        _ = lines.withUnsafeBytes { write(file, $0.baseAddress, $0.count) }
        close(file)
    }
}
