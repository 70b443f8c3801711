import Foundation
import NotifyAPI
import Synchronization

/// Hands every applied change to each observer's `AsyncStream` and to the optional callback.
final class ChangeBroadcaster: Sendable {
    private let observers = Mutex<[UUID: AsyncStream<NotificationChange>.Continuation]>([:])
    private let callback: (@Sendable (NotificationChange) -> Void)?

    init(callback: (@Sendable (NotificationChange) -> Void)?) {
        self.callback = callback
    }

    /// A new stream that receives every change emitted from now on, until the observer stops iterating.
    func subscribe() -> AsyncStream<NotificationChange> {
        let (stream, continuation) = AsyncStream<NotificationChange>.makeStream()
        let id = UUID()
        continuation.onTermination = { [weak self] _ in
            _ = self?.observers.withLock { $0.removeValue(forKey: id) }
        }
        observers.withLock { $0[id] = continuation }
        return stream
    }

    func emit(_ changes: [NotificationChange]) {
        guard !changes.isEmpty else { return }
        let current = observers.withLock { Array($0.values) }
        for change in changes {
            for continuation in current { continuation.yield(change) }
            callback?(change)
        }
    }

    /// Ends every observer's stream (the client is going away).
    func finish() {
        let current = observers.withLock { observers in
            defer { observers.removeAll() }
            return Array(observers.values)
        }
        for continuation in current { continuation.finish() }
    }
}
