import Foundation
import NotifyModels
import Testing

@testable import NotifyStore

/// Devices and event sources read from PostgreSQL: as a publish resolves its targets (`PostgresTargetDirectory`) and
/// as the HTTP API lists them (`PostgresDeviceStore`).
@Suite(.enabled(if: ProcessInfo.processInfo.environment["NOTIFY_TEST_STACK"] != nil, "needs PostgreSQL: run deploy/local/test.sh"))
struct PostgresDeviceStoreTests {
    @Test("owners of the app's subscriptions only, its event sources with their policies, and each user's devices in a source, oldest first")
    func targets() async throws {
        try await NotifyStoreTestDatabase.withDatabase { client, applier in
            let directory = PostgresTargetDirectory(client: client, logger: NotifyStoreTestDatabase.logger)
            let store = PostgresDeviceStore(client: client, logger: NotifyStoreTestDatabase.logger)
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

            // As the HTTP API lists them.
            let alices = try await store.devices(appId: appId, userId: "alice")
            #expect(alices.map(\.subscriptionId) == [phone, laptop] && alices.allSatisfy { $0.eventSources == ["news"] && $0.platform == "fcm" })
            let phoneToken = try #require(alices.first?.pushToken)
            #expect(try await store.subscriptionId(appId: appId, userId: "alice", platform: .fcm, pushToken: phoneToken, registeredSince: nil) == phone)
            #expect(try await store.subscriptionId(appId: appId, userId: "bob", platform: .fcm, pushToken: phoneToken, registeredSince: nil) == nil)
            #expect(try await store.subscriptionId(appId: appId, userId: "alice", platform: .fcm, pushToken: phoneToken, registeredSince: Date()) == nil)
            #expect(try await store.owner(appId: appId, subscriptionId: bobs) == "bob")
            #expect(try await store.owner(appId: appId, subscriptionId: foreign) == nil)
            let sources = try await store.eventSources(appId: appId, named: nil)
            #expect(sources.map(\.name) == ["alerts", "news"])
            #expect(sources.map(\.memberDevices) == [0, 3] && sources.map(\.memberUsers) == [0, 2])
            #expect(try await store.eventSources(appId: appId, named: "news").map(\.policy) == [.open])
            #expect(try await store.memberships(appId: appId, userId: "alice") == ["news": MembershipListing(subscriptionIds: [phone, laptop])])
        }
    }
}
