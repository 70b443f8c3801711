import Foundation
import NotifyModels
import Testing

@testable import NotifyStore

/// The devices fanout pushes to, read from PostgreSQL: users' devices with their devices version, and an event
/// source's audience page by page.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["NOTIFY_TEST_STACK"] != nil, "needs PostgreSQL: run deploy/local/test.sh"))
struct PostgresPushAudienceStoreTests {
    private static func register(_ id: UUID, appId: String, user: String, platform: Platform = .fcm, expiresIn: TimeInterval = 86_400) -> StorageCommand {
        StorageCommand(action: .registerSubscription(DeviceSubscription(
            subscriptionId: id, appId: appId, userId: user, platform: platform, pushToken: UUID().lowercasedString, appPackage: user == "bob" ? "com.example.b" : nil,
            displayName: nil, expirationDateTime: Date().addingTimeInterval(expiresIn), registeredAt: Date())))
    }

    private static func app(_ appId: String, badgeMode: BadgeMode) -> StorageCommand {
        StorageCommand(action: .createApp(AppRecord(
            appId: appId, name: "audience", apiKeyHash: UUID().lowercasedString, clientSigningKey: "key", brokerUser: nil, createdAt: Date(), badgeMode: badgeMode)))
    }

    @Test("each user's active devices in the order asked, with a devices version that a registration raises; a user without devices is empty")
    func usersDevices() async throws {
        try await NotifyStoreTestDatabase.withDatabase { client, applier in
            let store = PostgresPushAudienceStore(client: client, logger: NotifyStoreTestDatabase.logger)
            let appId = "audience_\(UUID().lowercasedString.prefix(12))"
            let (phone, tablet, expired, bobs) = (UUID(), UUID(), UUID(), UUID())
            _ = try await applier.apply([
                Self.app(appId, badgeMode: .unread), Self.register(phone, appId: appId, user: "alice"), Self.register(expired, appId: appId, user: "alice", expiresIn: -60),
                Self.register(bobs, appId: appId, user: "bob"),
            ])
            let users = [PushUser(appId: appId, userId: "bob"), PushUser(appId: appId, userId: "carol"), PushUser(appId: appId, userId: "alice")]
            let first = try await store.devices(of: users)
            #expect(first.map { $0.devices.map(\.subscriptionId) } == [[bobs], [], [phone]])
            #expect(first[0].devices.first?.appPackage == "com.example.b" && first[0].devices.first?.platform == .fcm)
            #expect(first[1].version == 0)
            _ = try await applier.apply([Self.register(tablet, appId: appId, user: "alice")])
            let second = try await store.devices(of: [users[2]])
            #expect(Set(second[0].devices.map(\.subscriptionId)) == [phone, tablet])
            #expect(second[0].version > first[2].version, "a registration raises the user's devices version")
        }
    }

    @Test("an event source's audience in pages of pageSize: members that joined by the broadcast's time, active ones only, with users and badges when asked")
    func broadcastPages() async throws {
        try await NotifyStoreTestDatabase.withDatabase { client, applier in
            let store = PostgresPushAudienceStore(client: client, logger: NotifyStoreTestDatabase.logger, pageSize: 2)
            let appId = "audience_\(UUID().lowercasedString.prefix(12))"
            let members = (0..<5).map { _ in UUID() }
            let expired = UUID()
            var commands = [Self.app(appId, badgeMode: .unreadIncludingBroadcasts)]
            commands.append(StorageCommand(action: .putEventSource(EventSourceRecord(appId: appId, name: "news", policy: .open, description: nil, createdAt: Date()))))
            commands += members.enumerated().map { Self.register($1, appId: appId, user: "user\($0)") }
            commands.append(Self.register(expired, appId: appId, user: "gone", expiresIn: -60))
            _ = try await applier.apply(commands)
            _ = try await applier.apply([StorageCommand(action: .joinEventSource(appId: appId, name: "news", subscriptionIds: members + [expired]))])
            let broadcastTime = Date()
            let late = UUID()
            _ = try await applier.apply([Self.register(late, appId: appId, user: "late")])
            _ = try await applier.apply([StorageCommand(action: .joinEventSource(appId: appId, name: "news", subscriptionIds: [late]))])

            var pages: [BroadcastAudiencePage] = []
            try await store.forEachBroadcastPage(appId: appId, eventSource: "news", joinedBy: broadcastTime, memberFilter: nil, withUsers: true) { pages.append($0) }
            let seen = pages.flatMap(\.devices).map(\.subscriptionId)
            #expect(Set(seen) == Set(members), "every member that joined by then, once; not the expired one nor the one that joined later")
            #expect(seen == seen.sorted { $0.uuidString < $1.uuidString })
            #expect(pages.allSatisfy { $0.devices.count <= 2 && $0.userIds.count == $0.devices.count && $0.badges.count == $0.devices.count })
            #expect(pages.flatMap(\.badges).allSatisfy { $0 == 0 })
            #expect(pages.allSatisfy { !$0.omitsBadge })

            var plain: [BroadcastAudiencePage] = []
            try await store.forEachBroadcastPage(appId: appId, eventSource: "missing", joinedBy: Date(), memberFilter: nil, withUsers: false) { plain.append($0) }
            #expect(plain.isEmpty)
        }
    }
}
