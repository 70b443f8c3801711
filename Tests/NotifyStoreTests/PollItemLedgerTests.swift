import Foundation
import Logging
import NotifyModels
import NotifyWire
import PostgresNIO
import Testing

@testable import NotifyStore

/// Storage's ledger of polled items (`poll_items`): a polled publish repeating the digest the ledger holds for its
/// notification is not applied, whatever became of its command's record; a changed one is, as an update.
@Suite struct PollItemLedgerTests {
    private static func entry(_ id: UUID, notification: UUID, digest: String, fresh: Bool = true) -> PollItemLedger.Entry {
        PollItemLedger.Entry(
            commandId: id, appId: "app", notificationId: notification, item: PolledItem(source: "feed", appNotificationId: "a", digest: digest),
            fresh: fresh)
    }

    @Test("a fresh entry repeats when its digest is the ledger's or an earlier entry's of the batch; a change then a change back both apply")
    func repeatsFollowTheBatchOrder() {
        let (a, b) = (UUID(), UUID())
        let ids = (0..<5).map { _ in UUID() }
        let kept = [PollItemLedger.Key(appId: "app", source: "feed", notificationId: a): "d1"]
        let entries = [
            Self.entry(ids[0], notification: a, digest: "d1"),
            Self.entry(ids[1], notification: a, digest: "d2"),
            Self.entry(ids[2], notification: a, digest: "d1"),
            Self.entry(ids[3], notification: b, digest: "d3", fresh: false),
            Self.entry(ids[4], notification: b, digest: "d3"),
        ]
        #expect(PollItemLedger.repeats(entries, kept: kept) == [ids[0], ids[4]])
    }

    @Test("only publishes carrying a polled item are ledger entries, each fresh unless applied before")
    func entriesAreThePolledPublishes() {
        let content = NotificationContent(
            appNotificationId: "a", groupName: nil, priority: .high, expirationDateTime: Date().addingTimeInterval(3600), displayTimeToLive: nil,
            platformTypes: nil, payload: NotificationPayload(visualContent: VisualContent(title: "t")), push: nil)
        let publish = StorageCommand.Action.publishNotification(
            PublishedNotification(appId: "app", userId: "u", notificationId: UUID(), content: content, receivedAt: Date()))
        let item = PolledItem(source: "feed", appNotificationId: "a", digest: "d")
        let polled = StorageCommand(action: publish, polledItem: item)
        let again = StorageCommand(action: publish, polledItem: item)
        let entries = PollItemLedger.entries(of: [StorageCommand(action: publish), polled, again]) { $0 == again.commandId }
        #expect(entries.map(\.commandId) == [polled.commandId, again.commandId])
        #expect(entries.map(\.fresh) == [true, false])
    }

    @Test("in PostgreSQL: an item served again after its command's record is purged is not applied; a changed one is, as an update; the ledger goes with its source",
          .enabled(if: ProcessInfo.processInfo.environment["NOTIFY_TEST_STACK"] != nil, "needs PostgreSQL: run deploy/local/test.sh"))
    func ledgerOutlivesTheCommandRecord() async throws {
        try await NotifyStoreTestDatabase.withDatabase { client, applier in
            let logger = Logger(label: "poll-item-ledger-tests")
            let appId = "core_\(UUID().lowercasedString.prefix(12))"
            _ = try await applier.apply([
                StorageCommand(action: .createApp(AppRecord(
                    appId: appId, name: "ledger test", apiKeyHash: UUID().lowercasedString, clientSigningKey: "key", brokerUser: nil, createdAt: Date()))),
                StorageCommand(action: .putPollSource(PollSourceRecord(
                    appId: appId, name: "feed", url: "https://example.com/feed", intervalSeconds: 60, authorization: nil, createdAt: Date()))),
            ])
            let notificationId = UUID()
            func polled(_ title: String, digest: String) -> StorageCommand {
                let content = NotificationContent(
                    appNotificationId: "a", groupName: nil, priority: .high, expirationDateTime: Date().addingTimeInterval(3600), displayTimeToLive: nil,
                    platformTypes: nil, payload: NotificationPayload(visualContent: VisualContent(title: title)), push: nil)
                return StorageCommand(
                    action: .publishNotification(PublishedNotification(
                        appId: appId, userId: "u", notificationId: notificationId, content: content, receivedAt: Date())),
                    polledItem: PolledItem(source: "feed", appNotificationId: "a", digest: digest))
            }
            func kinds(_ fragments: [(commandId: UUID, events: Data)]) throws -> [ChangeKind] {
                try ChangeEventBatch(wireBytes: ChangeEventBatch.wireBytes(joining: fragments.map(\.events))).events.map(\.kind)
            }
            func ledger() async throws -> [String] {
                var digests: [String] = []
                for try await digest in try await client.query("SELECT digest FROM poll_items WHERE app_id = \(appId)", logger: logger).decode(String.self) {
                    digests.append(digest)
                }
                return digests
            }

            let first = polled("First", digest: "d1")
            #expect(try kinds(try await applier.apply([first])) == [.created])
            #expect(try await ledger() == ["d1"])
            // The command's record purged (as after the claim retention), the same item comes again: nothing is applied.
            try await client.query("DELETE FROM applied_commands WHERE command_id = \(first.commandId)", logger: logger)
            #expect(try await applier.apply([first]).isEmpty)
            #expect(try await applier.apply([polled("First", digest: "d1")]).isEmpty, "nor under another command id")
            #expect(try kinds(try await applier.apply([polled("Changed", digest: "d2")])) == [.updated])
            #expect(try await ledger() == ["d2"])

            _ = try await applier.apply([StorageCommand(action: .deletePollSource(appId: appId, name: "feed"))])
            #expect(try await ledger().isEmpty, "the ledger goes with its source")
            #expect(try kinds(try await applier.apply([polled("Late", digest: "d3")])) == [.updated], "a publish for a deleted source is applied")
            #expect(try await ledger().isEmpty, "and records nothing")
            _ = try await applier.apply([StorageCommand(action: .deleteApp(appId: appId))])
        }
    }
}
