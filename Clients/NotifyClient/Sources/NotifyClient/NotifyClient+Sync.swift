import Foundation
import NotifyAPI
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension NotifyClient {
    private struct HistoryPage: Decodable {
        var notifications: [NotificationView]
        var nextPageToken: String?
    }

    private static let pageSize = 500

    /// Brings the cache up to date: renews the subscription when near expiry, sends queued state changes,
    /// then asks for every change after the stored cursor (following `hasMore`). Each change is applied
    /// (created/updated/stateChanged upsert; deleted, expired and removed, a broadcast of a source the user left, remove), the cursor and cache are saved, and
    /// the changes are emitted on `changes` and to `onChange`.
    ///
    /// When the service answers 410 `cursor_expired` (the cursor is older than its change log), the
    /// client drops its cursor and cache, reloads the history and syncs from the start.
    /// - Returns: the changes this call applied, oldest first (a change already applied by a concurrent
    ///   sync or the live stream is not repeated).
    @discardableResult
    public func sync() async throws -> [NotificationChange] {
        try await renewSubscriptionIfNeeded()
        try await flushPendingChanges()
        do {
            return try await fetchChanges()
        } catch let error as NotifyClientError where error.isServer(410, "cursor_expired") {
            state.sequence = 0
            state.broadcastSequence = 0
            state.notifications = [:]
            try save()
            try await reloadHistory()
            return try await fetchChanges()
        }
    }

    /// Tells whether `userInfo` is one of this service's pushes (it names a notification under `notify`)
    /// and if so syncs from the stored cursor, which also catches up on pushes that never arrived.
    /// Pushes of other services answer `.notOurs` without a network call, and so does (with no changes)
    /// a push whose sequence the cache has already reached.
    nonisolated(nonsending) public func processPushNotification(_ userInfo: [AnyHashable: Any]) async throws -> PushProcessingResult {
        guard let marker = PushMarker(userInfo: userInfo) else { return .notOurs }
        return .processed(try await sync(reaching: marker.sequence))
    }

    /// A broadcast's push carries sequence 0 (it is numbered in the app's broadcasts, not the user's changes): it syncs.
    private func sync(reaching sequence: Int64?) async throws -> [NotificationChange] {
        if let sequence, sequence > 0, sequence <= state.sequence { return [] }
        return try await sync()
    }

    private func fetchChanges() async throws -> [NotificationChange] {
        var applied: [NotificationChange] = []
        while true {
            var query = [URLQueryItem(name: "limit", value: String(Self.pageSize))]
            if state.position != SyncPosition() { query.append(URLQueryItem(name: "cursor", value: SyncCursor.encode(state.position))) }
            // Naming this device lets the service hold back the alert that follows a shoulder tap once it synced.
            var headers: [String: String] = [:]
            if let subscription = state.subscription { headers["X-Subscription-Id"] = subscription.id.uuidString.lowercased() }
            let (data, _) = try await transport.send(
                transport.request("GET", "/v1/me/notifications/changes", query: query, headers: headers))
            let page = try decode(ChangePage.self, from: data)
            let before = state.position
            let fresh = page.changes.filter(apply)
            if let through = try? SyncCursor.decode(page.cursor) {
                state.sequence = max(state.sequence, through.sequence)
                state.broadcastSequence = max(state.broadcastSequence, through.broadcastSequence)
            }
            try save()
            broadcaster.emit(fresh)
            applied += fresh
            if !page.hasMore || state.position == before { return applied }
        }
    }

    private func reloadHistory() async throws {
        var pageToken: String?
        repeat {
            var query = [URLQueryItem(name: "limit", value: String(Self.pageSize))]
            if let pageToken { query.append(URLQueryItem(name: "pageToken", value: pageToken)) }
            let (data, _) = try await transport.send(transport.request("GET", "/v1/me/notifications", query: query))
            let page = try decode(HistoryPage.self, from: data)
            for view in page.notifications { state.notifications[view.id] = overlaid(view) }
            pageToken = page.nextPageToken
        } while pageToken != nil
        try save()
    }

    /// Applies one change to the cache unless it is not newer than the cursor (a broadcast listed from the app's
    /// broadcasts: than the cursor's broadcast); answers whether it applied. The caller saves and emits.
    func apply(_ change: NotificationChange) -> Bool {
        if let broadcastSequence = change.broadcastSequence {
            guard broadcastSequence > state.broadcastSequence else { return false }
            state.broadcastSequence = broadcastSequence
        } else {
            guard change.sequence > state.sequence else { return false }
            state.sequence = change.sequence
        }
        let view = change.notification
        let removes = change.kind.removesNotification || view.status != .active
        state.notifications[view.id] = removes ? nil : overlaid(view)
        return true
    }

    /// `view` with the queued (unsent) changes of this device applied on top; nil when one deletes it.
    private func overlaid(_ view: NotificationView) -> NotificationView? {
        var view = view
        for pending in state.outbox where pending.notificationId == view.id {
            guard let states = pending.states else { return nil }
            if let readState = states.readState { view.readState = readState }
            if let userActionState = states.userActionState { view.userActionState = userActionState }
        }
        return view
    }
}
