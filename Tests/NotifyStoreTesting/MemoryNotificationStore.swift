import Foundation
import NotifyDatabase
import NotifyModels
import NotifyStore
import Synchronization

/// A `NotificationStore` held in memory, for in-process tests of what reads it: notifications sent to users, broadcasts
/// in their audiences' feeds, and each user's changes, numbered as storage numbers them. Tests fill it with `publish`,
/// `broadcast` and `apply`, as storage would have written the tables.
public final class MemoryNotificationStore: NotificationStore {
    private struct UserKey: Hashable {
        var appId: String
        var userId: String
    }

    /// One of a user's changes: to a notification sent to them, or to their state of a broadcast.
    private struct Change {
        var sequence: Int64
        var kind: ChangeKind
        var at: Date
        var notificationId: UUID
    }

    private struct Broadcast {
        var sequence: Int64
        var view: NotificationView
        var audience: Set<String>
    }

    private struct BroadcastState {
        var readState: ReadState = .unread
        var userActionState: UserActionState = .noInteraction
        var deleted = false
        var sequence: Int64 = 0
        var updatedAt: Date
    }

    private struct State {
        var notifications: [UserKey: [UUID: NotificationView]] = [:]
        var changes: [UserKey: [Change]] = [:]
        var lastSequence: [UserKey: Int64] = [:]
        var purgedThrough: [UserKey: Int64] = [:]
        var broadcasts: [String: [Broadcast]] = [:]
        var broadcastStates: [UserKey: [UUID: BroadcastState]] = [:]

        mutating func nextSequence(_ key: UserKey) -> Int64 {
            let next = (lastSequence[key] ?? 0) + 1
            lastSequence[key] = next
            return next
        }

        func broadcast(appId: String, id: UUID) -> Broadcast? {
            broadcasts[appId]?.first { $0.view.id == id }
        }

        /// A broadcast as `userId` sees it, with their state of it.
        func view(of broadcast: Broadcast, for key: UserKey, now: Date) -> NotificationView {
            var view = broadcast.view
            view.userId = key.userId
            if let state = broadcastStates[key]?[view.id] {
                view.readState = state.readState
                view.userActionState = state.userActionState
                view.sequence = state.sequence
                view.lastModifiedDateTime = state.updatedAt
                if state.deleted { view.status = .deleted }
            } else {
                view.sequence = 0
            }
            if view.status == .active && view.expirationDateTime <= now { view.status = .expired }
            if view.status == .deleted { view.payload = nil; view.push = nil }
            return view
        }
    }

    private let state = Mutex(State())

    public init() {}

    // MARK: Filling the store

    /// Stores `view` as sent to its user (its `sequence` and `status` are the store's: a new change, active) and answers
    /// it as stored.
    @discardableResult
    public func publish(_ view: NotificationView, appId: String, at: Date = Date()) -> NotificationView {
        state.withLock { state in
            let key = UserKey(appId: appId, userId: view.userId)
            var stored = view
            stored.sequence = state.nextSequence(key)
            state.notifications[key, default: [:]][view.id] = stored
            state.changes[key, default: []].append(Change(sequence: stored.sequence, kind: .created, at: at, notificationId: view.id))
            return stored
        }
    }

    /// Stores `view` as a broadcast of the app through `eventSource`, in the feeds of `audience` (the users of the
    /// source's members).
    public func broadcast(_ view: NotificationView, appId: String, eventSource: String, audience: Set<String>) {
        state.withLock { state in
            let sequence = (state.broadcasts[appId]?.last?.sequence ?? 0) + 1
            var stored = view
            stored.userId = ""
            stored.eventSource = eventSource
            state.broadcasts[appId, default: []].append(Broadcast(sequence: sequence, view: stored, audience: audience))
        }
    }

    /// Applies a state change as storage does: the notification (or the user's state of a broadcast) takes the user's
    /// next sequence, and the change is listed. Answers false when there is no such active notification.
    @discardableResult
    public func apply(_ change: NotificationStateChange, at: Date = Date()) -> Bool {
        state.withLock { state in
            let key = UserKey(appId: change.appId, userId: change.userId)
            if var view = state.notifications[key]?[change.notificationId] {
                guard view.status == .active else { return false }
                view.sequence = state.nextSequence(key)
                view.lastModifiedDateTime = at
                if let readState = change.readState { view.readState = readState }
                if let actionState = change.userActionState { view.userActionState = actionState }
                if change.delete { view.status = .deleted; view.payload = nil; view.push = nil }
                state.notifications[key]?[change.notificationId] = view
                state.changes[key, default: []].append(
                    Change(sequence: view.sequence, kind: change.delete ? .deleted : .stateChanged, at: at, notificationId: change.notificationId))
                return true
            }
            guard let broadcast = state.broadcast(appId: change.appId, id: change.notificationId), broadcast.audience.contains(change.userId)
            else { return false }
            var userState = state.broadcastStates[key]?[change.notificationId] ?? BroadcastState(updatedAt: at)
            guard !userState.deleted else { return false }
            userState.sequence = state.nextSequence(key)
            userState.updatedAt = at
            if let readState = change.readState { userState.readState = readState }
            if let actionState = change.userActionState { userState.userActionState = actionState }
            if change.delete { userState.deleted = true }
            state.broadcastStates[key, default: [:]][change.notificationId] = userState
            state.changes[key, default: []].append(
                Change(sequence: userState.sequence, kind: change.delete ? .deleted : .stateChanged, at: at, notificationId: change.notificationId))
            return true
        }
    }

    /// Forgets the user's changes up to `sequence`, as the retention purge does: older cursors have expired.
    public func purgeChanges(appId: String, userId: String, through sequence: Int64) {
        state.withLock { state in
            let key = UserKey(appId: appId, userId: userId)
            state.changes[key]?.removeAll { $0.sequence <= sequence }
            state.purgedThrough[key] = sequence
        }
    }

    // MARK: NotificationStore

    public func notification(appId: String, id: UUID, userId: String?) async throws -> NotificationView? {
        let now = Date()
        return state.withLock { state in
            for (key, views) in state.notifications where key.appId == appId && (userId == nil || key.userId == userId) {
                if var view = views[id] {
                    if view.status == .active && view.expirationDateTime <= now { view.status = .expired }
                    return view
                }
            }
            guard let broadcast = state.broadcast(appId: appId, id: id) else { return nil }
            guard let userId else { return broadcast.view }
            guard broadcast.audience.contains(userId) else { return nil }
            return state.view(of: broadcast, for: UserKey(appId: appId, userId: userId), now: now)
        }
    }

    public func changes(
        appId: String, userId: String, after position: SyncPosition, limit: Int, filter: NotificationFilter
    ) async throws -> ChangePage {
        try await ensureRetained(appId: appId, userId: userId, after: position.sequence)
        let now = Date()
        return state.withLock { state in
            let key = UserKey(appId: appId, userId: userId)
            var reached = position
            var listed: [NotificationChange] = []
            let own = (state.changes[key] ?? []).filter { $0.sequence > position.sequence }.sorted { $0.sequence < $1.sequence }
            for change in own.prefix(limit) {
                reached.sequence = change.sequence
                let view = state.notifications[key]?[change.notificationId]
                    ?? state.broadcast(appId: appId, id: change.notificationId).map { state.view(of: $0, for: key, now: now) }
                guard let view else { continue }
                let entry = NotificationChange(sequence: change.sequence, kind: change.kind, changedDateTime: change.at, notification: view)
                if filter.admits(entry) { listed.append(entry) }
            }
            guard own.count <= limit else { return ChangePage(changes: listed, cursor: SyncCursor.encode(reached), hasMore: true) }
            let room = limit - own.count
            let broadcasts = (state.broadcasts[appId] ?? []).filter { $0.sequence > position.broadcastSequence && $0.audience.contains(userId) }
            for broadcast in broadcasts.prefix(room) {
                reached.broadcastSequence = broadcast.sequence
                let view = state.view(of: broadcast, for: key, now: now)
                let kind: ChangeKind = switch view.status {
                case .deleted: .deleted
                case .expired: .expired
                case .active: view.createdDateTime == view.lastModifiedDateTime ? .created : .updated
                }
                let entry = NotificationChange(
                    sequence: reached.sequence, broadcastSequence: broadcast.sequence, kind: kind, changedDateTime: view.lastModifiedDateTime,
                    notification: view)
                if filter.admits(entry) { listed.append(entry) }
            }
            return ChangePage(changes: listed, cursor: SyncCursor.encode(reached), hasMore: broadcasts.count > room)
        }
    }

    public func ensureRetained(appId: String, userId: String, after sequence: Int64) async throws {
        let purged = state.withLock { $0.purgedThrough[UserKey(appId: appId, userId: userId)] ?? 0 }
        if sequence > 0 && sequence < purged { throw NotifyStoreError.cursorExpired }
    }

    public func history(appId: String, userId: String, filter: NotificationFilter, limit: Int, pageToken: String?) async throws -> HistoryPage {
        let after = try pageToken.map { try PageToken.decode($0) }
        let now = Date()
        let status = filter.status ?? .active
        var feed = state.withLock { state in
            let key = UserKey(appId: appId, userId: userId)
            var views = (state.notifications[key] ?? [:]).values.map { view in
                var view = view
                if view.status == .active && view.expirationDateTime <= now { view.status = .expired }
                return view
            }
            views += (state.broadcasts[appId] ?? []).filter { $0.audience.contains(userId) }.map { state.view(of: $0, for: key, now: now) }
            return views
        }
        feed = feed.filter { view in
            var matching = filter
            matching.status = status
            return matching.matches(view)
        }
        feed.sort { ($0.createdDateTime, $0.id.uuidString) > ($1.createdDateTime, $1.id.uuidString) }
        if let (createdAt, id) = after {
            let micros = createdAt.microsecondsSince1970
            feed = feed.filter { view in
                let viewMicros = PostgresTimestamp(view.createdDateTime).microsecondsSince1970
                return (viewMicros, view.id.uuidString) < (micros, id.uuidString)
            }
        }
        let page = Array(feed.prefix(limit))
        let next = feed.count > limit ? page.last.map { PageToken.encode(createdAt: $0.createdDateTime, id: $0.id) } : nil
        return HistoryPage(notifications: page, nextPageToken: next)
    }

    public func changeSequence(appId: String, userId: String, notificationId id: UUID, broadcast: Bool, after sequence: Int64) async throws -> Int64? {
        state.withLock { state in
            let key = UserKey(appId: appId, userId: userId)
            let found = broadcast ? state.broadcastStates[key]?[id]?.sequence : state.notifications[key]?[id]?.sequence
            return found.flatMap { $0 > sequence ? $0 : nil }
        }
    }
}
