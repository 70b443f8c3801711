import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NotifyModels
import NotifyStore
import NotifyStoreTesting
import NotifyTestSupport
import Testing
import _CryptoExtras

@testable import IngestCore

/// An app's provider credentials (`PUT /v1/apps/{appId}/providers/{provider}`), accepted for each kind of provider with
/// keys made by the test, in-process: stored sealed, answered and listed (`GET /v1/apps/{appId}`) without a secret.
@Suite struct ProviderCredentialRouteTests {
    private static let appPath = "/v1/apps/\(RouteTesting.appId)"

    /// Credentials of `provider` as an operator stores them, with new keys, and the secret text they hold.
    private static func credentials(for provider: Platform) throws -> (credentials: ProviderCredentials, secret: String) {
        switch provider {
        case .apns, .apnsVoip:
            let key = P256.Signing.PrivateKey().pemRepresentation
            return (.apns(APNsCredentials(teamId: "TEAM123456", keyId: "KEY1234567", privateKey: key, topic: "com.example.shop", environment: .sandbox, endpoint: nil)), key)
        case .fcm:
            let key = try _RSA.Signing.PrivateKey(keySize: .bits2048).pkcs8PEMRepresentation
            let account = FCMCredentials.ServiceAccount(
                projectId: "shop-project", privateKeyId: "key-1", privateKey: key, clientEmail: "notify@shop-project.iam.gserviceaccount.com",
                tokenUri: "https://8.8.8.8/token")
            return (.fcm(FCMCredentials(serviceAccount: account, endpoint: nil)), key)
        case .wns:
            let secret = "wns-client-secret-\(UUID())"
            return (.wns(WNSCredentials(packageSid: "ms-app://s-1-15-2-1234", clientSecret: secret, tokenURL: nil)), secret)
        case .webpush:
            let key = P256.Signing.PrivateKey().pemRepresentation
            return (.webpush(WebPushCredentials(vapidPrivateKey: key, subject: "mailto:push@example.com")), key)
        case .polling:
            throw TestFailure("polling devices have no provider")
        }
    }

    /// The lines of `secret` that give it away (a PEM's base64, without its armour).
    private static func secretLines(_ secret: String) -> [Substring] {
        secret.split(separator: "\n").filter { !$0.hasPrefix("-----") }
    }

    @Test("each kind of provider's credentials is accepted (200), stored sealed, and answered by what identifies it, without the secret",
          arguments: Platform.providers)
    func accepted(_ provider: Platform) async throws {
        let testing = RouteTesting()
        let (credentials, secret) = try Self.credentials(for: provider)
        try await testing.run { client in
            let response = try await client.execute(
                uri: "\(Self.appPath)/providers/\(provider.rawValue)", method: .put, headers: RouteTesting.operatorHeaders,
                body: ByteBuffer(bytes: try credentials.encoded(with: JSONEncoder())))
            #expect(response.status == .ok, "\(String(buffer: response.body))")
            let answer = String(buffer: response.body)
            #expect(!Self.secretLines(secret).contains { answer.contains($0) }, "the secret is in the answer: \(answer)")
            let stored = try RouteTesting.decode(StoredProvider.self, response)
            #expect((stored.appId, stored.provider, stored.appPackage) == (RouteTesting.appId, provider, nil))
            switch credentials {
            case .apns:
                #expect((stored.teamId, stored.keyId, stored.topic, stored.environment) == ("TEAM123456", "KEY1234567", "com.example.shop", "sandbox"))
            case .fcm:
                #expect((stored.projectId, stored.clientEmail) == ("shop-project", "notify@shop-project.iam.gserviceaccount.com"))
            case .wns:
                #expect(stored.packageSid == "ms-app://s-1-15-2-1234")
            case .webpush(let webPush):
                // The browser's applicationServerKey: the VAPID key's public point, base64url.
                var base64 = (stored.vapidPublicKey ?? "").replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
                while base64.count % 4 != 0 { base64 += "=" }
                let key = try P256.Signing.PrivateKey(pemRepresentation: webPush.vapidPrivateKey)
                #expect(Data(base64Encoded: base64) == key.publicKey.x963Representation)
                #expect(stored.subject == "mailto:push@example.com")
            }

            // Stored sealed for this app and provider: the secret is not in the stored text, and opens to what was sent.
            let sealed = try #require(try await testing.storage.apps.providerSecret(appId: RouteTesting.appId, provider: provider.rawValue, appPackage: ""))
            #expect(!Self.secretLines(secret).contains { sealed.contains($0) })
            let opened = try RouteTesting.keyring.open(sealed, for: .providerCredentials(appId: RouteTesting.appId, provider: provider))
            #expect(try ProviderCredentials.decode(provider, from: opened, decoder: JSONDecoder()) == credentials)
        }
    }

    @Test("the app lists the providers it has credentials for, per app identity, with when they were stored and no secret")
    func listedWithoutSecrets() async throws {
        let testing = RouteTesting()
        let providers: [(Platform, String?)] = [(.apns, nil), (.apns, "com.example.shop.clip"), (.fcm, nil), (.wns, nil), (.webpush, nil)]
        let stored = try providers.map { provider, _ in try Self.credentials(for: provider) }
        try await testing.run { client in
            let started = Date()
            for ((provider, appPackage), (credentials, _)) in zip(providers, stored) {
                let response = try await client.execute(
                    uri: "\(Self.appPath)/providers/\(provider.rawValue)" + (appPackage.map { "?appPackage=\($0)" } ?? ""), method: .put,
                    headers: RouteTesting.operatorHeaders, body: ByteBuffer(bytes: try credentials.encoded(with: JSONEncoder())))
                #expect(response.status == .ok)
                #expect(try RouteTesting.decode(StoredProvider.self, response).appPackage == appPackage)
            }
            let response = try await client.execute(uri: Self.appPath, method: .get, headers: RouteTesting.operatorHeaders)
            let listed = try RouteTesting.decode(AppView.self, response).providers
            #expect(listed.map { "\($0.provider) \($0.appPackage ?? "-")" } == ["apns -", "apns com.example.shop.clip", "fcm -", "webpush -", "wns -"])
            #expect(listed.allSatisfy { $0.rejectedReason == nil && $0.updatedAt >= started.addingTimeInterval(-1) })
            let answer = String(buffer: response.body)
            #expect(!stored.flatMap { Self.secretLines($0.secret) }.contains { answer.contains($0) }, "a secret is in the app's listing")
        }
    }
}
