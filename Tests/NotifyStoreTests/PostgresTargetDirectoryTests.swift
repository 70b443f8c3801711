import Foundation
import NotifyModels
import NotifyStore
import Testing

@testable import StorageCore

/// The targets a publish names, read from PostgreSQL: subscriptions' owners, event sources, a user's devices in one.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["NOTIFY_TEST_STACK"] != nil, "needs PostgreSQL: run deploy/local/test.sh"))
struct PostgresTargetDirectoryTests {
    @Test("owners of the app's subscriptions only, its event sources with their policies, and each user's devices in a source, oldest first")
    func targets() async throws {
        try await NotifyStoreTestDatabase.withDatabase { client, applier in
            let directory = PostgresTargetDirectory(client: client, logger: NotifyStoreTestDatabase.logger)
            let appId = "targets_\(UUID().lowercasedString.prefix(12))"
            let otherApp = "targets_\(UUID().lowercasedString.prefix(12))"
            func device(_ app: String, _ user: String, registeredAt: Date) -> (UUID, StorageCommand) {
                let id = UUID()
                return (id, StorageCommand(action: .registerSubscription(DeviceSubscription(
                    subscriptionId: id, appId: app, userId: user, platform: .fcm, pushToken: UUID().lowercasedString, appPackage: nil,
                    displayName: nil, expirationDateTime: Date().addingTimeInterval(86_400), registeredAt: registeredAt))))
            }
            var commands = [appId, otherApp].map { app in
                StorageCommand(action: .createApp(AppRecord(
                    appId: app, name: "targets", apiKeyHash: UUID().lowercasedString, clientSigningKey: "key", brokerUser: nil, createdAt: Date())))
            }
            let (phone, registerPhone) = device(appId, "alice", registeredAt: Date(timeIntervalSinceNow: -60))
            let (laptop, registerLaptop) = device(appId, "alice", registeredAt: Date())
            let (bobs, registerBobs) = device(appId, "bob", registeredAt: Date())
            let (foreign, registerForeign) = device(otherApp, "alice", registeredAt: Date())
            commands += [registerPhone, registerLaptop, registerBobs, registerForeign]
            commands += [
                StorageCommand(action: .putEventSource(EventSourceRecord(appId: appId, name: "news", policy: .open, description: nil, createdAt: Date()))),
                StorageCommand(action: .putEventSource(EventSourceRecord(appId: appId, name: "alerts", policy: .appServer, description: nil, createdAt: Date()))),
            ]
            _ = try await applier.apply(commands)
            _ = try await applier.apply([StorageCommand(action: .joinEventSource(appId: appId, name: "news", subscriptionIds: [laptop, phone, bobs]))])

            #expect(try await directory.owners(appId: appId, of: [phone, bobs, foreign, UUID()]) == [phone: "alice", bobs: "bob"])
            #expect(try await directory.eventSources(appId: appId, named: ["news", "alerts", "missing"]) == ["news": .open, "alerts": .appServer])
            #expect(try await directory.eventSources(appId: otherApp, named: ["news"]).isEmpty)
            #expect(try await directory.members(appId: appId, source: "news", userIds: ["alice", "carol"]) == ["alice": [phone, laptop]])
            #expect(try await directory.members(appId: appId, source: "alerts", userIds: ["alice"]).isEmpty)
        }
    }
}
