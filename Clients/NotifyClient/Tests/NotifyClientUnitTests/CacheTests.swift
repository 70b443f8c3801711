import Foundation
import NotifyAPI
import Testing

@testable import NotifyClient

/// Reading the local cache: what `readBatch` and `notificationsPastDisplayTime` answer, and a cache file the library
/// cannot read.
@Suite struct CacheTests {
    /// A client whose cache holds `notifications` (synced from a service listing them).
    func client(holding notifications: [NotificationView]) async throws -> NotifyClient {
        let changes = notifications.map { Fixture.change(.created, $0) }
        let client = try Fixture.client(FakeService { _ in try .ok(Fixture.page(changes, through: Int64(changes.count))) })
        _ = try await client.sync()
        return client
    }

    @Test("readBatch answers the newest first, at most maxSize, and only those matching the filter")
    func readBatch() async throws {
        let unread = Fixture.notification(sequence: 1)
        let read = Fixture.notification(sequence: 2, readState: .read)
        let dismissed = Fixture.notification(sequence: 3, readState: .read, userActionState: .dismissed)
        let client = try await client(holding: [unread, read, dismissed])
        #expect(await client.readBatch().map(\.id) == [dismissed.id, read.id, unread.id])
        #expect(await client.readBatch(maxSize: 2).map(\.id) == [dismissed.id, read.id])
        #expect(await client.readBatch(filter: NotificationFilter(readState: .unread)).map(\.id) == [unread.id])
        #expect(await client.readBatch(filter: NotificationFilter(readState: .read, userActionState: .noInteraction)).map(\.id) == [read.id])
        #expect(await client.readBatch(filter: NotificationFilter(status: .expired)).isEmpty)
    }

    @Test("a notification whose expiration time passed counts as expired until the service's expiry removes it")
    func expiredBeforeTheServiceSaysSo() async throws {
        let lapsed = Fixture.notification(sequence: 1, created: Date(timeIntervalSinceNow: -2 * 86_400))
        let current = Fixture.notification(sequence: 2)
        let client = try await client(holding: [lapsed, current])
        #expect(await client.readBatch().map(\.id) == [current.id])
        #expect(await client.readBatch(filter: NotificationFilter(status: .expired)).map(\.id) == [lapsed.id])
    }

    @Test("visual notifications whose displayTimeToLive passed are listed for removal from the notification centre, and stay cached")
    func pastDisplayTime() async throws {
        let brief = Fixture.notification(sequence: 1, displayTimeToLive: 60)
        let lasting = Fixture.notification(sequence: 2)
        let client = try await client(holding: [brief, lasting])
        let end = try #require(brief.displayExpiresAt)
        #expect(await client.notificationsPastDisplayTime(at: end.addingTimeInterval(-1)).isEmpty)
        #expect(await client.notificationsPastDisplayTime(at: end).map(\.id) == [brief.id])
        #expect(await client.readBatch().count == 2)
    }

    @Test("a cache file the library did not write is refused with a storage error, not overwritten")
    func unreadableCache() throws {
        let storage = Fixture.storage()
        try FileManager.default.createDirectory(at: storage, withIntermediateDirectories: true)
        let file = storage.appending(path: "notify-\(Fixture.appId).json")
        try Data("not a cache".utf8).write(to: file)
        let error = #expect(throws: NotifyClientError.self) { try Fixture.client(FakeService { _ in .status(204) }, storage: storage) }
        #expect(error?.code == .storage)
        #expect(try Data(contentsOf: file) == Data("not a cache".utf8))
    }
}
