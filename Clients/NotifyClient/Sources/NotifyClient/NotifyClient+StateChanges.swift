import Foundation
import NotifyAPI

extension NotifyClient {
    /// Sets a notification's read and/or user-action state (e.g. `.dismissed` when the user swiped it
    /// away): applied to the cache at once, queued in the cache's outbox, and sent now if the service
    /// is reachable. The service's own change reaches the user's other devices, not this one.
    /// While offline the change stays queued (`pendingChangeCount`) until `flushPendingChanges()` or the
    /// next sync sends it; queued changes are sent in order, each once.
    /// - Throws: `.invalidArgument` when both states are nil; `.storage` when the cache cannot be saved.
    public func setState(of id: UUID, readState: ReadState? = nil, userActionState: UserActionState? = nil) async throws {
        guard readState != nil || userActionState != nil else {
            throw NotifyClientError(.invalidArgument, "set readState and/or userActionState")
        }
        if var view = state.notifications[id] {
            if let readState { view.readState = readState }
            if let userActionState { view.userActionState = userActionState }
            state.notifications[id] = view
        }
        try await enqueue(PendingChange(notificationId: id, states: StateChangeRequest(readState: readState, userActionState: userActionState)))
    }

    /// Deletes a notification for the user on every device: removed from the cache at once, then sent
    /// like `setState` (queued while offline).
    public func delete(_ id: UUID) async throws {
        state.notifications[id] = nil
        try await enqueue(PendingChange(notificationId: id, states: nil))
    }

    /// Sends the queued state changes, oldest first, each once. A change the service answers 404 for
    /// (the notification is gone) or rejects as invalid is dropped. Stops at the first failure that may
    /// pass (offline, 401, 429, 5xx), keeping it and the rest queued, and throws that error.
    public func flushPendingChanges() async throws {
        while let running = flushTask { _ = try? await running.value }
        let task = Task { try await sendOutbox() }
        flushTask = task
        defer { flushTask = nil }
        try await task.value
    }

    private func enqueue(_ change: PendingChange) async throws {
        state.outbox.append(change)
        try save()
        do {
            try await flushPendingChanges()
        } catch let error as NotifyClientError where error.isTransient {
            // Stays queued; the next flush or sync sends it.
        }
    }

    private func sendOutbox() async throws {
        while let next = state.outbox.first {
            do {
                try await send(next)
            } catch {
                // A permanent refusal (404: the notification is gone; 400/403/409) drops the change: it can never apply.
                if error.isTransient { throw error }
            }
            state.outbox.removeAll { $0.id == next.id }
            try save()
        }
    }

    private func send(_ change: PendingChange) async throws(NotifyClientError) {
        var headers: [String: String] = [:]
        if let subscription = state.subscription { headers["X-Subscription-Id"] = subscription.id.uuidString.lowercased() }
        let path = "/v1/me/notifications/\(change.notificationId.uuidString.lowercased())"
        if let states = change.states {
            _ = try await transport.send(transport.request("PATCH", path, headers: headers, body: try encode(states)))
        } else {
            _ = try await transport.send(transport.request("DELETE", path, headers: headers))
        }
    }
}
