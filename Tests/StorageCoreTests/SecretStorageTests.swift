import Foundation
import Logging
import NotifyModels
import NotifyStore
import Testing

@testable import StorageCore

/// Secrets as storage keeps them: key rotations applied once, and values re-sealed after the key-encryption key moved.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["NOTIFY_TEST_STACK"] != nil, "needs PostgreSQL: run deploy/local/test.sh"))
struct SecretStorageTests {
    private let logger = Logger(label: "secret-storage-tests")

    private static func newApp(signingKey: String) -> AppRecord {
        AppRecord(
            appId: "sec_\(UUID().uuidString.prefix(12).lowercased())", name: "secrets", apiKeyHash: UUID().uuidString, clientSigningKey: signingKey,
            brokerUser: nil, createdAt: Date())
    }

    /// The test stack's key-encryption keys (deploy/local/services.sh keeps them in NOTIFY_SECRET_KEYS_FILE, by default
    /// the state directory's secret-keys).
    private static func stackKeys() throws -> String {
        let environment = ProcessInfo.processInfo.environment
        let path = environment["NOTIFY_SECRET_KEYS_FILE"] ?? (environment["NOTIFY_STATE_DIR"] ?? ".local/test") + "/secret-keys"
        return try String(contentsOfFile: path, encoding: .utf8)
    }

    @Test("a rotation keeps the replaced key until its end, and applied twice it does not lose the replaced key")
    func rotationAppliedOnce() async throws {
        try await StorageTestDatabase.withApplier { applier, client in
            let app = Self.newApp(signingKey: "sealed:v1:k:first")
            _ = try await applier.apply([StorageCommand(action: .createApp(app))])
            let retiresAt = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + 3600).rounded(.down))
            let newHash = UUID().uuidString
            let rotation = StorageCommand(action: .rotateAppKeys(AppKeyRotation(
                appId: app.appId, apiKeyHash: newHash, clientSigningKey: "sealed:v1:k:second", retiresAt: retiresAt)))
            _ = try await applier.apply([rotation])
            _ = try await applier.apply([StorageCommand(action: rotation.action)])
            let stored = try #require(try await PostgresAppStore(client: client, logger: logger).credentials(appId: app.appId))
            #expect(stored.apiKeyHash == newHash && stored.previousAPIKeyHash?.hash == app.apiKeyHash)
            #expect(stored.sealedClientSigningKey == "sealed:v1:k:second" && stored.previousSealedClientSigningKey?.sealed == "sealed:v1:k:first")
            #expect(stored.previousAPIKeyHash?.retiresAt != nil && stored.previousAPIKeyHash?.retiresAt == stored.previousSealedClientSigningKey?.retiresAt)
        }
    }

    @Test("after the key-encryption key moved, storage re-seals every secret with the new key, plaintext ones too; one it cannot open is counted")
    func resealing() async throws {
        try await StorageTestDatabase.withApplier { applier, client in
            let oldEntry = SecretKeyring.generateEntry(id: "old")
            let before = try SecretKeyring(parsing: oldEntry)
            var app = Self.newApp(signingKey: "")
            app.clientSigningKey = before.seal("signing-key-1", for: .clientSigningKey(appId: app.appId))
            let lost = Self.newApp(signingKey: "sealed:v1:gone:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
            let credentials = before.seal("{\"clientSecret\":\"wns-secret\"}", for: .providerCredentials(appId: app.appId, provider: .wns))
            _ = try await applier.apply([
                StorageCommand(action: .createApp(app)), StorageCommand(action: .createApp(lost)),
                StorageCommand(action: .setProviderCredentials(appId: app.appId, provider: .wns, appPackage: "", sealedCredentials: credentials)),
                StorageCommand(action: .putWebhook(WebhookRecord(
                    appId: app.appId, url: "https://hooks.example/x", events: ["subscription.created"], secret: "whsec_plaintext", createdAt: Date()))),
            ])
            // The key moves to the running stack's own: the resealer seals every app's secrets in the database, other
            // tests' too, and the stack's services must still open them.
            let after = try SecretKeyring(parsing: "\(try Self.stackKeys())\n\(oldEntry)")
            let resealer = SecretResealer(store: SealedSecretStore(client: client, logger: logger), keyring: after, interval: .seconds(60), logger: logger)
            let left = try await resealer.resealAll()
            let apps = PostgresAppStore(client: client, logger: logger)
            let signing = try #require(try await apps.credentials(appId: app.appId)?.sealedClientSigningKey)
            let stored = try #require(try await apps.providerSecret(appId: app.appId, provider: Platform.wns.rawValue, appPackage: ""))
            let webhook = try #require(try await apps.webhook(appId: app.appId)?.sealedSecret)
            for value in [signing, stored, webhook] { #expect(after.isSealedWithActiveKey(value)) }
            #expect(try after.openText(signing, for: .clientSigningKey(appId: app.appId)) == "signing-key-1")
            #expect(try after.openText(stored, for: .providerCredentials(appId: app.appId, provider: .wns)) == "{\"clientSecret\":\"wns-secret\"}")
            #expect(try after.openText(webhook, for: .webhookSecret(appId: app.appId)) == "whsec_plaintext")
            #expect(left >= 1, "the value sealed with a key no longer given stays counted (other tests' apps may add to it)")
            let untouched = try await apps.credentials(appId: lost.appId)?.sealedClientSigningKey
            #expect(untouched == lost.clientSigningKey)
            _ = try await applier.apply([StorageCommand(action: .deleteApp(appId: lost.appId))])
        }
    }
}
