import Foundation
import NotifyAPI
import Synchronization
import Testing

@testable import NotifyClient

/// Bringing the cache up to date from the change log, after the stored cursor.
@Suite struct SyncTests {
    let first = Fixture.notification(sequence: 1, title: "one")
    let second = Fixture.notification(sequence: 2, title: "two")

    @Test("the first sync asks from the start, applies the changes and keeps the cursor; the next asks after it")
    func cursor() async throws {
        let (first, second) = (first, second)
        let service = FakeService { request in
            request.query["cursor"] == nil
                ? try .ok(Fixture.page([Fixture.change(.created, first), Fixture.change(.created, second)], through: 2))
                : try .ok(Fixture.page([], through: 2))
        }
        let storage = Fixture.storage()
        let client = try Fixture.client(service, storage: storage)
        let applied = try await client.sync()
        #expect(applied.map(\.notification.id) == [first.id, second.id])
        #expect(await client.readBatch().map(\.id) == [second.id, first.id], "newest first")
        #expect(try await client.sync().isEmpty)
        let asked = service.requests.map(\.query)
        #expect(asked.map { $0["limit"] } == ["500", "500"])
        #expect(asked.map { $0["cursor"] } == [nil, SyncCursor.encode(SyncPosition(sequence: 2))])
        #expect(service.requests.allSatisfy { $0.path == "/v1/me/notifications/changes" })

        let relaunched = try Fixture.client(service, storage: storage)
        #expect(await relaunched.readBatch().count == 2, "the cache survives a relaunch")
        _ = try await relaunched.sync()
        #expect(service.requests.last?.query["cursor"] == SyncCursor.encode(SyncPosition(sequence: 2)), "and so does the cursor")
    }

    @Test("pages are followed while the service has more")
    func pages() async throws {
        let (first, second) = (first, second)
        let service = FakeService { request in
            request.query["cursor"] == nil
                ? try .ok(Fixture.page([Fixture.change(.created, first)], through: 1, hasMore: true))
                : try .ok(Fixture.page([Fixture.change(.created, second)], through: 2))
        }
        let client = try Fixture.client(service)
        #expect(try await client.sync().map(\.notification.id) == [first.id, second.id])
        #expect(service.requests.count == 2)
    }

    @Test("updates and state changes replace the cached notification; deletions and expiries remove it")
    func changesApplied() async throws {
        let (first, second) = (first, second)
        var read = first
        (read.readState, read.sequence) = (.read, 3)
        var deleted = second
        (deleted.status, deleted.sequence) = (.deleted, 4)
        let pages = Mutex([
            Fixture.page([Fixture.change(.created, first), Fixture.change(.created, second)], through: 2),
            Fixture.page([Fixture.change(.stateChanged, read), Fixture.change(.deleted, deleted)], through: 4),
        ])
        let service = FakeService { _ in try .ok(pages.withLock { $0.count > 1 ? $0.removeFirst() : $0[0] }) }
        let client = try Fixture.client(service)
        _ = try await client.sync()
        let applied = try await client.sync()
        #expect(applied.map(\.kind) == [.stateChanged, .deleted])
        #expect(await client.readBatch().map(\.id) == [first.id])
        #expect(await client.notification(id: first.id)?.readState == .read)
        #expect(await client.notification(id: second.id) == nil)
    }

    @Test("a change the cache has already reached is not applied again")
    func noRepeats() async throws {
        let change = Fixture.change(.created, first)
        let service = FakeService { _ in try .ok(Fixture.page([change], through: 1)) }
        let client = try Fixture.client(service)
        #expect(try await client.sync() == [change])
        #expect(try await client.sync().isEmpty)
    }

    @Test("every change applied is emitted, to the changes streams and to onChange, in order")
    func emitted() async throws {
        let changes = [Fixture.change(.created, first), Fixture.change(.created, second)]
        let service = FakeService { _ in try .ok(Fixture.page(changes, through: 2)) }
        let called = Mutex<[NotificationChange]>([])
        let client = try NotifyClient(
            configuration: .init(baseURL: FakeService.baseURL, appId: Fixture.appId, storageDirectory: Fixture.storage()),
            tokenProvider: { "token" }, onChange: { change in called.withLock { $0.append(change) } }, transport: service)
        let observed = client.changes
        _ = try await client.sync()
        var streamed: [NotificationChange] = []
        for await change in observed {
            streamed.append(change)
            if streamed.count == 2 { break }
        }
        #expect(streamed == changes)
        #expect(called.withLock { $0 } == changes)
    }

    @Test("a cursor older than the change log: the cache is dropped, the history read again, and the sync starts over")
    func cursorExpired() async throws {
        let (first, second) = (first, second)
        let stale = Fixture.notification(sequence: 1, title: "gone meanwhile")
        let expiredOnce = Mutex(false)
        let service = FakeService { request in
            switch request.path {
            case "/v1/me/notifications":
                return request.query["pageToken"] == nil
                    ? .status(200, json: try Self.history([first], next: "p2")) : .status(200, json: try Self.history([second], next: nil))
            case "/v1/me/notifications/changes" where request.query["cursor"] == nil && !expiredOnce.withLock({ $0 }):
                return try .ok(Fixture.page([Fixture.change(.created, stale)], through: 1))
            case "/v1/me/notifications/changes" where request.query["cursor"] == SyncCursor.encode(SyncPosition(sequence: 1)):
                expiredOnce.withLock { $0 = true }
                return try .error(410, "cursor_expired")
            default:
                return try .ok(Fixture.page([], through: 2))
            }
        }
        let client = try Fixture.client(service)
        _ = try await client.sync()
        #expect(await client.readBatch().map(\.id) == [stale.id])
        _ = try await client.sync()
        #expect(Set(await client.readBatch().map(\.id)) == [first.id, second.id], "the history as it is now")
        #expect(service.requests.map { "\($0.path) \($0.query["pageToken"] ?? "")" }.suffix(3) == [
            "/v1/me/notifications ", "/v1/me/notifications p2", "/v1/me/notifications/changes ",
        ])
        #expect(service.requests.last?.query["cursor"] == nil, "from the start")
    }

    @Test("a subscribed device names itself when it syncs")
    func namesTheDevice() async throws {
        let subscriptionId = UUID()
        let service = FakeService { request in
            request.method == "POST"
                ? try .ok(Fixture.Registered(subscriptionId: subscriptionId, expirationDateTime: Date(timeIntervalSinceNow: 30 * 86_400)))
                : try .ok(Fixture.page([], through: 0))
        }
        let client = try Fixture.client(service)
        _ = try await client.sync()
        try await client.subscribe(pushToken: "ab12")
        _ = try await client.sync()
        #expect(service.requests.map { $0.headers["X-Subscription-Id"] } == [nil, nil, subscriptionId.uuidString.lowercased()])
    }

    @Test("broadcasts in the feed are followed by their own cursor: each applied once, whatever the user's sequence")
    func broadcasts() async throws {
        let news = Fixture.notification(sequence: 1, title: "Extra")
        let published = NotificationChange(sequence: 0, broadcastSequence: 5, kind: .created, changedDateTime: news.lastModifiedDateTime, notification: news)
        let service = FakeService { _ in
            try .ok(ChangePage(changes: [published], cursor: SyncCursor.encode(SyncPosition(sequence: 0, broadcastSequence: 5)), hasMore: false))
        }
        let client = try Fixture.client(service)
        #expect(try await client.sync() == [published])
        #expect(try await client.sync().isEmpty, "listed again, not applied again")
        #expect(await client.notification(id: news.id) != nil)
        #expect(service.requests.last?.query["cursor"] == SyncCursor.encode(SyncPosition(sequence: 0, broadcastSequence: 5)))
    }

    @Test("a broadcast's expiry (listed again from the app's broadcasts) and its removal from the feed (a change of the user's) drop it from the cache")
    func broadcastsExpiredAndRemoved() async throws {
        var news = Fixture.notification(sequence: 1, title: "Extra"), sale = Fixture.notification(sequence: 2, title: "Sale")
        news.eventSource = "news"
        sale.eventSource = "shop"
        func listed(_ view: NotificationView, _ kind: ChangeKind, at broadcastSequence: Int64) -> NotificationChange {
            NotificationChange(sequence: 0, broadcastSequence: broadcastSequence, kind: kind, changedDateTime: view.lastModifiedDateTime, notification: view)
        }
        var expiredNews = news
        expiredNews.status = .expired
        let removedSale = NotificationChange(sequence: 1, kind: .removed, changedDateTime: sale.lastModifiedDateTime, notification: sale)
        let pages = [
            ChangePage(changes: [listed(news, .created, at: 1), listed(sale, .created, at: 2)],
                       cursor: SyncCursor.encode(SyncPosition(sequence: 0, broadcastSequence: 2)), hasMore: false),
            ChangePage(changes: [removedSale, listed(expiredNews, .expired, at: 3)],
                       cursor: SyncCursor.encode(SyncPosition(sequence: 1, broadcastSequence: 3)), hasMore: false),
        ]
        let served = Mutex(0)
        let service = FakeService { _ in try .ok(pages[served.withLock { count in count += 1; return min(count, pages.count) - 1 }]) }
        let client = try Fixture.client(service)
        _ = try await client.sync()
        #expect(await client.notification(id: news.id) != nil)
        #expect(await client.notification(id: sale.id) != nil)
        #expect(try await client.sync().map(\.kind) == [.removed, .expired])
        #expect(await client.notification(id: news.id) == nil, "the expired broadcast is still cached")
        #expect(await client.notification(id: sale.id) == nil, "the broadcast removed from the feed is still cached")
    }

    /// A page of `GET /v1/me/notifications`.
    static func history(_ notifications: [NotificationView], next: String?) throws -> String {
        struct Page: Encodable {
            var notifications: [NotificationView]
            var nextPageToken: String?
        }
        return String(decoding: try WireCoding.makeEncoder().encode(Page(notifications: notifications, nextPageToken: next)), as: UTF8.self)
    }
}
