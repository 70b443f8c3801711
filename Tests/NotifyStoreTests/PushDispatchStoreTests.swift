import Foundation
import NotifyModels
import Testing

@testable import NotifyStore

/// What push-dispatch reads, against PostgreSQL: credentials by app identity, fallbacks no longer needed, endpoints.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["NOTIFY_TEST_STACK"] != nil, "needs PostgreSQL: run deploy/local/test.sh"))
struct PushDispatchStoreTests {
    @Test("credentials of the device's identity, else the app's default ones; fallbacks unneeded once synced or unregistered; the WNS and Web Push endpoints")
    func pushDispatchReads() async throws {
        try await NotifyStoreTestDatabase.withDatabase { client, applier in
            let store = PushDispatchStore(client: client, logger: NotifyStoreTestDatabase.logger)
            let appId = "dispatch_\(UUID().lowercasedString.prefix(12))"
            let (phone, gone) = (UUID(), UUID())
            let endpoint = "https://fcm.googleapis.com/fcm/send/\(UUID().lowercasedString)"
            _ = try await applier.apply([
                StorageCommand(action: .createApp(AppRecord(
                    appId: appId, name: "dispatch", apiKeyHash: UUID().lowercasedString, clientSigningKey: "key", brokerUser: nil, createdAt: Date()))),
                StorageCommand(action: .setProviderCredentials(appId: appId, provider: .fcm, appPackage: "", sealedCredentials: "default")),
                StorageCommand(action: .setProviderCredentials(appId: appId, provider: .fcm, appPackage: "com.example.b", sealedCredentials: "b")),
                StorageCommand(action: .registerSubscription(DeviceSubscription(
                    subscriptionId: phone, appId: appId, userId: "alice", platform: .webpush, pushToken: endpoint,
                    keys: WebPushKeys(p256dh: "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4", auth: "BTBZMqHH6r4Tts7J_aSIgg"),
                    appPackage: nil, displayName: nil, expirationDateTime: Date().addingTimeInterval(86_400), registeredAt: Date()))),
            ])
            #expect(try await store.credentials(appId: appId, platform: .fcm, appPackage: "com.example.b")?.sealed == "b")
            #expect(try await store.credentials(appId: appId, platform: .fcm, appPackage: "com.example.other")?.appPackage == "")
            #expect(try await store.credentials(appId: appId, platform: .fcm, appPackage: nil)?.sealed == "default")
            #expect(try await store.credentials(appId: appId, platform: .apns, appPackage: nil) == nil)

            func job(_ subscription: UUID, sequence: Int64) -> PushJob {
                PushJob(
                    pushId: UUID(), appId: appId, subscriptionId: subscription, platform: .webpush, deviceToken: endpoint, notificationId: UUID(),
                    sequence: sequence, kind: .created, isAlert: true, priority: .high, expiration: Date().addingTimeInterval(60), collapseId: "c",
                    payload: "{}")
            }
            let pending = job(phone, sequence: 5)
            let unregistered = job(gone, sequence: 1)
            #expect(try await store.unneededFallbacks([pending, unregistered]) == [unregistered.pushId])
            _ = try await applier.apply([StorageCommand(action: .recordDeviceSync(appId: appId, userId: "alice", subscriptionId: phone, sequence: 5))])
            #expect(try await store.unneededFallbacks([pending]) == [pending.pushId])

            #expect(try await store.pushEndpoints().filter { $0.appId == appId } == [
                PushDispatchStore.Endpoint(subscriptionId: phone, appId: appId, platform: .webpush, url: endpoint),
            ])
        }
    }
}
