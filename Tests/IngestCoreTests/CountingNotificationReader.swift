import Foundation
import NotifyModels
import NotifyStore
import NotifyStoreTesting
import NotifyTestSupport
import Synchronization

/// The notifications held in memory, read as ingest's routes read them, counting each user's reads of their changes:
/// a live stream reads them once it is subscribed to wake-ups, then once at each wake-up, so a test waits on the count
/// to know that a stream is open, or that it has read what a wake-up was for.
final class CountingNotificationReader: NotificationStore {
    private let store: MemoryNotificationStore
    /// Reads of changes by "appId/userId".
    private let changeReads = Mutex<[String: Int]>([:])

    init(of store: MemoryNotificationStore) {
        self.store = store
    }

    private static func key(_ appId: String, _ userId: String) -> String { "\(appId)/\(userId)" }

    /// Returns once `userId` of `appId` has read their changes `count` times in all; throws after 10 s.
    func waitUntil(_ userId: String, of appId: String, hasReadChanges count: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while changeReads.withLock({ $0[Self.key(appId, userId)] ?? 0 }) < count {
            guard ContinuousClock.now < deadline else { throw TestFailure("\(appId)/\(userId) did not read their changes \(count) times within 10 s") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    func changes(appId: String, userId: String, after position: SyncPosition, limit: Int, filter: NotificationFilter) async throws -> ChangePage {
        let page = try await store.changes(appId: appId, userId: userId, after: position, limit: limit, filter: filter)
        changeReads.withLock { $0[Self.key(appId, userId), default: 0] += 1 }
        return page
    }

    func notification(appId: String, id: UUID, userId: String?) async throws -> NotificationView? {
        try await store.notification(appId: appId, id: id, userId: userId)
    }

    func ensureRetained(appId: String, userId: String, after sequence: Int64) async throws {
        try await store.ensureRetained(appId: appId, userId: userId, after: sequence)
    }

    func history(appId: String, userId: String, filter: NotificationFilter, limit: Int, pageToken: String?) async throws -> HistoryPage {
        try await store.history(appId: appId, userId: userId, filter: filter, limit: limit, pageToken: pageToken)
    }

    func changeSequence(appId: String, userId: String, notificationId id: UUID, broadcast: Bool, after sequence: Int64) async throws -> Int64? {
        try await store.changeSequence(appId: appId, userId: userId, notificationId: id, broadcast: broadcast, after: sequence)
    }
}
