import Foundation
import NotifyModels
import NotifyWire
import Testing

@testable import NotifyStore

/// The badge every mode counts, as the change events of a batch carry it and as a broadcast's audience pages give it
/// for each member, against PostgreSQL on a scratch database.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["NOTIFY_TEST_STACK"] != nil, "needs PostgreSQL: run deploy/local/test.sh"))
struct BadgeModeStoreTests {
    private let appId = "badges_\(UUID().lowercasedString.prefix(12))"

    private func app(_ mode: BadgeMode) -> StorageCommand {
        StorageCommand(action: .createApp(AppRecord(
            appId: appId, name: "badges", apiKeyHash: UUID().lowercasedString, clientSigningKey: "key", brokerUser: nil, createdAt: Date(), badgeMode: mode)))
    }

    private func publish(_ id: UUID = UUID(), to user: String, group: String?) -> StorageCommand {
        StorageCommand(action: .publishNotification(PublishedNotification(
            appId: appId, userId: user, notificationId: id,
            content: StoreCommands.content(title: "t", groupName: group), receivedAt: Date())))
    }

    private func read(_ id: UUID, by user: String) -> StorageCommand {
        StorageCommand(action: .changeNotificationState(NotificationStateChange(
            appId: appId, userId: user, notificationId: id, readState: .read, userActionState: nil, delete: false,
            originSubscriptionId: nil, requestedAt: Date())))
    }

    private func setMode(_ mode: BadgeMode) -> StorageCommand {
        StorageCommand(action: .setBadgeMode(appId: appId, mode: mode))
    }

    /// The badge the last event of the batch carries.
    private func badge(after commands: [StorageCommand], _ applier: CommandBatchApplier) async throws -> Int? {
        let fragments = try await applier.apply(commands).map(\.events)
        return try ChangeEventBatch(wireBytes: ChangeEventBatch.wireBytes(joining: fragments)).events.last?.badge
    }

    @Test("unreadGroups counts the distinct groups of the unread notifications, each ungrouped one alone; a read, a replace into another group and a switch of mode count again")
    func unreadGroups() async throws {
        try await NotifyStoreTestDatabase.withDatabase { _, applier in
            _ = try await applier.apply([app(.unreadGroups)])
            let (chatA, chatB, lone) = (UUID(), UUID(), UUID())
            // Three in "a", one in "b", two without a group: 2 conversations + 2 = 4.
            let first = try await badge(after: [
                publish(chatA, to: "alice", group: "a"), publish(to: "alice", group: "a"), publish(to: "alice", group: "a"),
                publish(chatB, to: "alice", group: "b"), publish(lone, to: "alice", group: nil), publish(to: "alice", group: nil),
                publish(to: "bob", group: "a"),
            ], applier)
            #expect(first == 1, "bob's own count: one conversation")
            #expect(try await badge(after: [publish(to: "alice", group: "a")], applier) == 4)
            #expect(try await badge(after: [read(chatB, by: "alice")], applier) == 3, "b has no unread left")
            #expect(try await badge(after: [read(chatA, by: "alice")], applier) == 3, "a still has unread ones")
            #expect(try await badge(after: [read(lone, by: "alice")], applier) == 2)
            #expect(try await badge(after: [publish(chatB, to: "alice", group: "c")], applier) == 3, "the replace is unread again, in c")

            // Out of the mode and back: the counts are taken afresh from the notifications.
            #expect(try await badge(after: [setMode(.unread), publish(to: "alice", group: "a")], applier) == 6)
            #expect(try await badge(after: [setMode(.unreadGroupsIncludingBroadcasts), publish(to: "alice", group: "d")], applier) == 4)
        }
    }

    @Test("external and externalIncludingBroadcasts: the app server's number, plus the unread broadcasts in the user's feed")
    func externalWithBroadcasts() async throws {
        try await NotifyStoreTestDatabase.withDatabase { _, applier in
            let phone = UUID()
            _ = try await applier.apply([
                app(.externalIncludingBroadcasts),
                StorageCommand(action: .putEventSource(EventSourceRecord(appId: appId, name: "news", policy: .open, description: nil, createdAt: Date()))),
                StoreCommands.register(phone, appId: appId, user: "alice"),
                StorageCommand(action: .setExternalBadge(appId: appId, userId: "alice", badge: 5, at: Date())),
            ])
            _ = try await applier.apply([StorageCommand(action: .joinEventSource(appId: appId, name: "news", subscriptionIds: [phone]))])
            _ = try await applier.apply([StoreCommands.broadcast(appId: appId)])
            #expect(try await badge(after: [publish(to: "alice", group: nil)], applier) == 6)
            #expect(try await badge(after: [setMode(.external), publish(to: "alice", group: nil)], applier) == 5)
        }
    }

    @Test("a broadcast's audience carries each member's badge in every mode but none")
    func broadcastAudienceBadges() async throws {
        try await NotifyStoreTestDatabase.withDatabase { client, applier in
            let store = PostgresPushAudienceStore(client: client, logger: NotifyStoreTestDatabase.logger)
            let (alices, bobs) = (UUID(), UUID())
            var commands = [app(.unread)]
            commands.append(StorageCommand(action: .putEventSource(EventSourceRecord(appId: appId, name: "news", policy: .open, description: nil, createdAt: Date()))))
            for (id, user) in [(alices, "alice"), (bobs, "bob")] {
                commands.append(StorageCommand(action: .registerSubscription(DeviceSubscription(
                    subscriptionId: id, appId: appId, userId: user, platform: .fcm, pushToken: UUID().lowercasedString, appPackage: nil,
                    displayName: nil, expirationDateTime: Date().addingTimeInterval(86_400), registeredAt: Date()))))
            }
            commands += [publish(to: "alice", group: "a"), publish(to: "alice", group: "a"), publish(to: "bob", group: nil)]
            commands.append(StorageCommand(action: .setExternalBadge(appId: appId, userId: "bob", badge: 9, at: Date())))
            _ = try await applier.apply(commands)
            _ = try await applier.apply([StorageCommand(action: .joinEventSource(appId: appId, name: "news", subscriptionIds: [alices, bobs]))])

            func badges() async throws -> (byDevice: [UUID: Int], omitted: Bool) {
                var pages: [BroadcastAudiencePage] = []
                try await store.forEachBroadcastPage(appId: appId, eventSource: "news", joinedBy: Date(), memberFilter: nil, withUsers: false) { pages.append($0) }
                let devices = pages.flatMap(\.devices).map(\.subscriptionId)
                return (Dictionary(uniqueKeysWithValues: zip(devices, pages.flatMap(\.badges))), pages.contains { $0.omitsBadge })
            }
            #expect(try await badges().byDevice == [alices: 2, bobs: 1])
            _ = try await applier.apply([setMode(.unreadGroups)])
            #expect(try await badges().byDevice == [alices: 1, bobs: 1])
            _ = try await applier.apply([setMode(.external)])
            #expect(try await badges().byDevice == [alices: 0, bobs: 9])
            _ = try await applier.apply([setMode(.none)])
            let none = try await badges()
            #expect(none.byDevice.isEmpty && none.omitted)
        }
    }
}
