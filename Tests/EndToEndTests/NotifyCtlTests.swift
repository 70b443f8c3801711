import AsyncHTTPClient
import Foundation
import NotifyAMQP
import NotifyModels
import NotifyTestSupport
import NotifyWire
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension EndToEndTests {
    @Suite("notifyctl")
    struct NotifyCtlTests {
        /// How a run of notifyctl ended and what it printed.
        private struct Run {
            var status: Int32
            var stdout: String
            var stderr: String
        }

        /// What `apps create --json` answers, as far as the tests read it.
        private struct CreatedApp: Decodable {
            var appId: String
            var apiKey: String
            var clientSigningKey: String
        }

        /// Runs the built notifyctl against the stack: NOTIFY_URL and NOTIFY_ADMIN_TOKEN are the stack's, the rest of the
        /// test's environment (NOTIFY_RABBITMQ_MANAGEMENT_URL included) is passed on, with `environment` over it. Killed
        /// after 60 s.
        private static func notifyctl(_ arguments: [String], environment: [String: String] = [:]) async throws -> Run {
            let directory = FileManager.default.temporaryDirectory
            let outputs = [directory.appendingPathComponent("notifyctl-\(UUID().uuidString).out"), directory.appendingPathComponent("notifyctl-\(UUID().uuidString).err")]
            defer { for output in outputs { try? FileManager.default.removeItem(at: output) } }
            for output in outputs {
                guard FileManager.default.createFile(atPath: output.path, contents: nil) else { throw TestFailure("cannot create \(output.path)") }
            }
            let stdout = try FileHandle(forWritingTo: outputs[0])
            let stderr = try FileHandle(forWritingTo: outputs[1])
            defer {
                try? stdout.close()
                try? stderr.close()
            }

            let process = Process()
            process.executableURL = URL(fileURLWithPath: Stack.root + "/.build/debug/notifyctl")
            process.arguments = arguments
            process.environment = ProcessInfo.processInfo.environment
                .merging(["NOTIFY_URL": Stack.ingestURL, "NOTIFY_ADMIN_TOKEN": Stack.adminToken]) { $1 }
                .merging(environment) { $1 }
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = stdout
            process.standardError = stderr
            let (exits, reportExit) = AsyncStream.makeStream(of: Int32.self)
            process.terminationHandler = { process in
                reportExit.yield(process.terminationStatus)
                reportExit.finish()
            }
            try process.run()
            let pid = process.processIdentifier
            let timer = Task {
                try await Task.sleep(for: .seconds(60))
                kill(pid, SIGKILL)
            }
            var status: Int32 = -1
            for await code in exits { status = code }
            timer.cancel()
            let text = outputs.map { (try? String(contentsOf: $0, encoding: .utf8)) ?? "" }
            return Run(status: status, stdout: text[0], stderr: text[1])
        }

        private static func notifyctl(_ arguments: String..., environment: [String: String] = [:]) async throws -> Run {
            try await notifyctl(arguments, environment: environment)
        }

        /// Runs notifyctl and requires exit status 0.
        private static func succeeding(_ arguments: String..., environment: [String: String] = [:]) async throws -> Run {
            let run = try await notifyctl(arguments, environment: environment)
            guard run.status == 0 else {
                throw TestFailure("notifyctl \(arguments.joined(separator: " ")) exited \(run.status): \(run.stderr)\(run.stdout)")
            }
            return run
        }

        @Test("a signing key, client secret, API key or admin token that begins with \"-\" (a base64url key does one time in 64) is read as the option's value")
        func secretsBeginningWithADash() async throws {
            let signingKey = "-" + randomHex(bytes: 16)
            let token = try await Self.succeeding("user-token", "--user", "user-dash", "--signing-key", signingKey, "--app", "app_dash")
                .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            try await UserToken.verify(token, with: await UserToken.keys(signingKey: signingKey))
            #expect(try UserToken.unverifiedClaims(token).subject == "user-dash")

            let created = try await Self.succeeding("apps", "create", "--name", "notifyctl dash \(uniqueSuffix())", "--json")
            let app = try JSONDecoder().decode(CreatedApp.self, from: Data(created.stdout.utf8))
            let secret = "-" + randomHex(bytes: 16)
            SecretsUsed.record([app.apiKey, app.clientSigningKey, secret])
            let wns = try await Self.succeeding("providers", "set", "wns", "--package-sid", "ms-app://s-1-15-2-dash", "--secret", secret, "--app", app.appId)
            #expect(wns.stdout.contains("ms-app://s-1-15-2-dash") && !wns.stdout.contains(secret), "stored, the secret not shown: \(wns.stdout)")

            // Wrong secrets reach ingest and are refused there (exit 1), not by the argument parser (exit 64, "Missing value").
            for arguments in [
                ["apps", "list", "--admin-token", "-not-the-token"],
                ["deliveries", UUID().uuidString.lowercased(), "--api-key", "-not-a-key", "--app", app.appId],
            ] {
                let run = try await Self.notifyctl(arguments)
                #expect(run.status == 1, "notifyctl \(arguments.joined(separator: " ")): exited \(run.status): \(run.stderr)")
                #expect(!run.stderr.contains("Missing value"), "\(run.stderr)")
            }
        }

        @Test("api-keys creates a publish-only key (printed once), lists it without its secret and revokes it")
        func scopedAPIKeys() async throws {
            let created = try await Self.succeeding("apps", "create", "--name", "notifyctl keys \(uniqueSuffix())", "--json")
            let app = try JSONDecoder().decode(CreatedApp.self, from: Data(created.stdout.utf8))
            SecretsUsed.record([app.apiKey, app.clientSigningKey])
            let asApp = ["NOTIFY_APP_ID": app.appId, "NOTIFY_API_KEY": app.apiKey]
            let key = try WireCoding.makeDecoder().decode(
                APIKeyView.self,
                from: Data(try await Self.succeeding("api-keys", "create", "--scope", "publish", "--name", "ci", "--json", environment: asApp).stdout.utf8))
            let secret = try #require(key.apiKey)
            SecretsUsed.record([secret])
            #expect(key.scope == .publish && key.keyId.hasPrefix("key_"))
            let listed = try await Self.succeeding("api-keys", "list", environment: asApp).stdout
            #expect(listed.contains(key.keyId) && listed.contains("publish") && !listed.contains(secret), "\(listed)")
            // The publish key may not list keys: refused (exit 1, forbidden).
            let refused = try await Self.notifyctl("api-keys", "list", environment: ["NOTIFY_APP_ID": app.appId, "NOTIFY_API_KEY": secret])
            #expect(refused.status == 1 && refused.stderr.contains("forbidden"), "\(refused.stderr)")
            #expect(try await Self.succeeding("api-keys", "revoke", key.keyId, environment: asApp).stdout.contains("revoked \(key.keyId)"))
            struct Listing: Decodable { var apiKeys: [APIKeyView] }
            let after = try WireCoding.makeDecoder().decode(
                Listing.self, from: Data(try await Self.succeeding("api-keys", "list", "--json", environment: asApp).stdout.utf8))
            #expect(after.apiKeys.map(\.keyId) == [key.keyId] && after.apiKeys.first?.revokedAt != nil)
        }

        @Test("an operator and an app server run it: apps, badge mode, event sources, provider keys, user tokens, send, delivery log, errors")
        func operatorAndAppServer() async throws {
            let created = try await Self.succeeding("apps", "create", "--name", "notifyctl \(uniqueSuffix())", "--json")
            let app = try JSONDecoder().decode(CreatedApp.self, from: Data(created.stdout.utf8))
            SecretsUsed.record([app.apiKey, app.clientSigningKey])
            #expect(app.appId.hasPrefix("app_") && app.apiKey.hasPrefix("nk_"))
            let asApp = ["NOTIFY_APP_ID": app.appId, "NOTIFY_API_KEY": app.apiKey]

            // The badge mode: a number set by the app server is taken only in external mode.
            let settings = try await Self.succeeding("apps", "set", app.appId, "--badge-mode", "external")
            #expect(settings.stdout.contains("external"))
            let badge = try await StackClient.send(
                .PUT, "\(Stack.ingestURL)/v1/apps/\(app.appId)/users/someone/badge", bearer: app.apiKey, json: Data(#"{"badge": 3}"#.utf8))
            #expect(badge.status == 200, "the badge mode is external: \(badge.text)")

            // Event sources, the app given by the environment.
            let source = try await Self.succeeding(
                "event-sources", "create", "news", "--policy", "appServer", "--description", "the news", environment: asApp)
            #expect(source.stdout.contains("created news"))
            let sources = try await Self.succeeding("event-sources", "list", environment: asApp)
            #expect(sources.stdout.split(separator: "\n").contains { $0.hasPrefix("news ") && $0.contains("appServer") }, "listed: \(sources.stdout)")
            #expect(try await Self.succeeding("event-sources", "show", "news", environment: asApp).stdout.contains("the news"))

            // A generated VAPID key: its public key is printed, an uncompressed P-256 point.
            let webPush = try await Self.succeeding(
                "providers", "set", "webpush", "--generate-vapid", "--subject", "mailto:ops@example.com", "--app", app.appId)
            let publicKey = webPush.stdout.split(separator: "\n").first { $0.hasPrefix("vapidPublicKey") }?
                .split(separator: " ").dropFirst().first.map(String.init)
            let point = publicKey.flatMap(Base64URLCoding.decode)
            #expect(point?.count == 65 && point?.first == 4, "the public key: \(webPush.stdout)")
            let wns = try await Self.succeeding(
                "providers", "set", "wns", "--package-sid", "ms-app://s-1-15-2-notifyctl", "--secret", "s3cret", "--app", app.appId)
            #expect(wns.stdout.contains("ms-app://s-1-15-2-notifyctl") && !wns.stdout.contains("s3cret"), "stored, the secret not shown: \(wns.stdout)")

            // APNs credentials from a .p8 file, a device registered with a token notifyctl minted, a notification sent to it.
            let key = try await Sandbox.newKey(topic: "com.example.notify.e2e")
            let p8 = FileManager.default.temporaryDirectory.appendingPathComponent("notifyctl-\(uniqueSuffix()).p8")
            try Data(key.privateKey.utf8).write(to: p8)
            defer { try? FileManager.default.removeItem(at: p8) }
            _ = try await Self.succeeding(
                "providers", "set", "apns", "--p8", p8.path, "--key-id", key.keyId, "--team-id", key.teamId, "--topic", key.topic,
                "--environment", "sandbox", "--endpoint", Stack.sandboxAPNsURL, "--app", app.appId)
            let user = "user-\(uniqueSuffix())"
            let token = try await Self.succeeding(
                "user-token", "--user", user, "--signing-key", app.clientSigningKey, "--app", app.appId
            ).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(try await StackClient.send(.GET, "\(Stack.ingestURL)/v1/me/notifications", bearer: token).status == 200, "the API takes the token")
            let pushToken = randomHex(bytes: 32)
            let registered = try await StackClient.send(
                .POST, "\(Stack.ingestURL)/v1/me/subscriptions", bearer: token,
                json: StackClient.encode(SubscriptionRequest(platform: .apns, pushToken: pushToken, displayName: "notifyctl")))
            #expect(registered.status == 201 || registered.status == 202, "registering: \(registered.text)")

            let beforeSend = WireCoding.formatTimestamp(Date().addingTimeInterval(-1))
            let sent = try await Self.succeeding("send", "--user", user, "--title", "Hello", "--body", "from notifyctl", environment: asApp)
            let id = sent.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(UUID(uuidString: id) != nil, "send prints the id: \(sent.stdout)")
            #expect(try await Sandbox.missingNotifications([id], at: pushToken).isEmpty, "the device got it")

            // The delivery log: the summary counts the push once the outcome is stored, the log lists it.
            var pushes: JSONValue?
            let deadline = ContinuousClock.now + .seconds(20)
            while pushes != .number(1) && ContinuousClock.now < deadline {
                let summary = try await Self.succeeding("deliveries", id, "--summary", "--json", environment: asApp)
                pushes = try JSONDecoder().decode(JSONValue.self, from: Data(summary.stdout.utf8))["pushes"]
                if pushes != .number(1) { try await Task.sleep(for: .milliseconds(200)) }
            }
            #expect(pushes == .number(1), "the summary counts the push")
            let summary = try await Self.succeeding("deliveries", id, "--summary", environment: asApp)
            #expect(summary.stdout.contains("pushes") && summary.stdout.contains("accepted"), "the summary: \(summary.stdout)")
            let log = try await Self.succeeding("deliveries", id, "--limit", "1", environment: asApp)
            #expect(log.stdout.contains("accepted") && log.stdout.contains("apns"), "the log: \(log.stdout)")

            // The user's changes over the live stream: it stops after --count changes, or by itself after --timeout.
            let tailed = try await Self.succeeding(
                "tail", "--user", user, "--signing-key", app.clientSigningKey, "--count", "1", "--timeout", "20", "--app", app.appId)
            #expect(tailed.stdout.contains(" created \(id) unread noInteraction Hello"), "tail: \(tailed.stdout)")
            let quiet = try await Self.succeeding(
                "tail", "--user", user, "--signing-key", app.clientSigningKey, "--count", "5", "--timeout", "1", "--app", app.appId)
            #expect(quiet.stdout.split(separator: "\n").count == 1, "one change, then the timeout: \(quiet.stdout)")

            // The app's push outcomes: those logged since a time, and one logged while the command follows.
            let logged = try await Self.succeeding("tail", "--deliveries", "--since", beforeSend, "--count", "1", "--timeout", "20", environment: asApp)
            #expect(logged.stdout.contains(" \(id) ") && logged.stdout.contains(" apns 0 accepted "), "tail --deliveries: \(logged.stdout)")
            async let following = Self.succeeding("tail", "--deliveries", "--count", "1", "--timeout", "30", environment: asApp)
            try await Task.sleep(for: .seconds(2))
            let second = try await Self.succeeding("send", "--user", user, "--title", "Again", environment: asApp).stdout
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let followed = try await following
            #expect(followed.stdout.contains(" \(second) ") && followed.stdout.contains(" accepted "), "tail --deliveries, live: \(followed.stdout)")

            // A batch from a file: a line per item; one refused item makes it exit 1.
            let batch = FileManager.default.temporaryDirectory.appendingPathComponent("notifyctl-\(uniqueSuffix()).json")
            try Data("""
                {"notifications": [{"userId": "\(user)", "payload": {"rawContent": "one"}},
                                   {"subscriptionId": "\(UUID().uuidString)", "payload": {"rawContent": "two"}}]}
                """.utf8).write(to: batch)
            defer { try? FileManager.default.removeItem(at: batch) }
            let batched = try await Self.notifyctl("send", "--file", batch.path, environment: asApp)
            #expect(batched.status == 1, "stderr: \(batched.stderr)")
            #expect(batched.stdout.contains("202") && batched.stdout.contains("subscription_not_found"), "the items: \(batched.stdout)")

            // A refusal exits 1 with the service's error and its field; wrong usage exits 64.
            let refused = try await Self.notifyctl("send", "--source", "no-such-source", "--title", "Hi", environment: asApp)
            #expect(refused.status == 1)
            #expect(refused.stderr.contains("error: event_source_not_found:") && refused.stderr.contains("(field: eventSource)"), "stderr: \(refused.stderr)")
            let misused = try await Self.notifyctl("send", "--title", "no target", environment: asApp)
            #expect(misused.status == 64, "stderr: \(misused.stderr)")

            // The operator's view: the app listed and shown with its provider, never a secret; a new API key works at once.
            let shown = try await Self.succeeding("apps", "show", app.appId)
            #expect(shown.stdout.contains("provider webpush") && shown.stdout.contains("external"), "show: \(shown.stdout)")
            let listed = try await Self.succeeding("apps", "list", "--limit", "10000")
            #expect(listed.stdout.split(separator: "\n").contains { $0.hasPrefix(app.appId) && $0.contains("webpush") }, "list: \(listed.stdout)")
            for output in [shown.stdout, listed.stdout] { #expect(!output.contains(app.apiKey) && !output.contains(app.clientSigningKey)) }
            let newKey = try await Self.succeeding("apps", "rotate-key", app.appId, "api-key", "--overlap-seconds", "60", "--json")
            let rotatedKey = try #require(try JSONDecoder().decode([String: String].self, from: Data(newKey.stdout.utf8))["apiKey"])
            SecretsUsed.record([rotatedKey])
            #expect(try await Self.succeeding("event-sources", "list", environment: ["NOTIFY_APP_ID": app.appId, "NOTIFY_API_KEY": rotatedKey]).status == 0)
            #expect(try await Self.succeeding("apps", "show", app.appId).stdout.contains("previous apiKey accepted until"))

            // The app's end: a new broker user, the source deleted, the app deleted; its key is then refused.
            let rotated = try await Self.succeeding("apps", "rotate-broker", app.appId, "--overlap-seconds", "0")
            #expect(rotated.stdout.contains("broker password"), "rotate-broker: \(rotated.stdout)")
            #expect(try await Self.succeeding("event-sources", "delete", "news", environment: asApp).stdout.contains("news"))
            #expect(try await Self.succeeding("apps", "delete", app.appId).stdout.contains(app.appId))
            #expect(try await Self.notifyctl("event-sources", "list", environment: asApp).status == 1, "the deleted app's key is refused")
        }

        @Test("apps set names an app's identity provider, apps show prints it, --remove-identity-provider removes it; a URL that is not https is refused")
        func identityProvider() async throws {
            let created = try await Self.succeeding("apps", "create", "--name", "notifyctl idp \(uniqueSuffix())", "--json")
            let app = try JSONDecoder().decode(CreatedApp.self, from: Data(created.stdout.utf8))
            SecretsUsed.record([app.apiKey, app.clientSigningKey])
            let issuer = "\(Stack.sandboxURL)/idp/notifyctl-\(uniqueSuffix())"
            let set = try await Self.succeeding(
                "apps", "set", app.appId, "--identity-issuer", issuer, "--identity-audience", "ios-client", "--identity-user-id-claim", "email")
            #expect(set.stdout.contains(issuer) && set.stdout.contains("ios-client") && set.stdout.contains("email"), "\(set.stdout)")
            let shown = try await Self.succeeding("apps", "show", app.appId)
            #expect(shown.stdout.contains(issuer) && shown.stdout.contains("from the issuer's discovery document"), "\(shown.stdout)")

            let refused = try await Self.notifyctl("apps", "set", app.appId, "--identity-issuer", "http://127.0.0.1:1/idp", "--identity-audience", "a")
            #expect(refused.status == 1 && refused.stderr.contains("identityProvider.issuer"), "exited \(refused.status): \(refused.stderr)")
            let incomplete = try await Self.notifyctl("apps", "set", app.appId, "--identity-issuer", issuer)
            #expect(incomplete.status == 64, "an issuer without an audience is wrong usage: \(incomplete.stderr)")

            let removed = try await Self.succeeding("apps", "set", app.appId, "--remove-identity-provider")
            #expect(removed.stdout.split(separator: "\n").contains { $0.hasPrefix("identityProvider") && $0.hasSuffix("none") }, "\(removed.stdout)")
            #expect(!(try await Self.succeeding("apps", "show", app.appId)).stdout.contains(issuer))
        }

        @Test("dlq lists the dead-letter queues, shows a dead letter decoded with its reason, replays it to its queue and purges")
        func deadLetters() async throws {
            let queue = "notifyctl-test-\(uniqueSuffix())"
            let marker = "marker-\(uniqueSuffix())"
            let command = StorageCommandBatch(commands: [StorageCommand(action: .deleteEventSource(appId: "app_notifyctl", name: marker))])
            let deadLetter = AMQPOutboundMessage(
                routingKey: "\(queue).dead", body: command.wireBytes(),
                properties: AMQPProperties(
                    contentType: WireFormat.contentType, messageId: "dead-\(marker)",
                    headers: ["x-notify-reason": "the test's reason", "x-notify-queue": .string(QueueNames.storageCommands)]))
            try await withPublisher(try Broker.configuration(), logger: testLogger, topology: .workQueue(queue)) { try await $0.publish(deadLetter) }
            do {
                let list = try await Self.succeeding("dlq", "list")
                for name in ["\(queue).dead", "storage.commands.dead", "push.apns.dead"] {
                    #expect(list.stdout.contains(name), "dlq list names \(name): \(list.stdout)")
                }
                #expect(!list.stdout.contains("\(queue) "), "only dead-letter queues are listed")

                // Shown decoded as the queue it came from carries, with its reason; it stays.
                for _ in 0..<2 {
                    let shown = try await Self.succeeding("dlq", "show", "\(queue).dead")
                    for part in ["the test's reason", "StorageCommandBatch", marker, "dead-\(marker)"] {
                        #expect(shown.stdout.contains(part), "dlq show prints \(part): \(shown.stdout)")
                    }
                }

                // Replayed: the same message, headers included, reaches the queue it was dead-lettered from.
                let replayed = try await Self.succeeding("dlq", "replay", "\(queue).dead")
                #expect(replayed.stdout.contains("\(queue).dead: 1 replayed to \(queue)"), "\(replayed.stdout)")
                let delivered = try await Broker.withConsumer(try Broker.configuration(), queue: queue, topology: .workQueue(queue)) { inbox in
                    let deadline = ContinuousClock.now + .seconds(10)
                    while inbox.all.isEmpty && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
                    return inbox.all
                }
                #expect(delivered.map(\.body) == [command.wireBytes()])
                #expect(delivered.first?.properties.headers["x-notify-reason"] == "the test's reason")
                #expect(delivered.first?.properties.messageId == "dead-\(marker)")
                #expect(try await Self.succeeding("dlq", "show", "\(queue).dead").stdout.contains("is empty"))

                let unconfirmed = try await Self.notifyctl("dlq", "purge", "\(queue).dead")
                #expect(unconfirmed.status == 64, "purging needs --yes")
                #expect(try await Self.succeeding("dlq", "purge", "\(queue).dead", "--yes").stdout.contains("purged"))
            } catch {
                try await Self.deleteQueues([queue, "\(queue).dead"])
                throw error
            }
            try await Self.deleteQueues([queue, "\(queue).dead"])
        }

        /// Deletes the test's own queues through the management API.
        private static func deleteQueues(_ names: [String]) async throws {
            for name in names {
                let (status, _) = try await Broker.management(.DELETE, "/api/queues/\(Broker.virtualHost)/\(name)")
                #expect(status == 204, "deleting queue \(name)")
            }
        }
    }
}
