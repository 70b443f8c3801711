import Foundation
import NotifyAMQP
import NotifyModels
import NotifyWire
import ServiceLifecycle
import Synchronization

/// Tells this instance's open live streams that their user has new changes.
///
/// Every ingest instance has a transient queue on the `notify.live` exchange and receives every change
/// batch; a stream is only woken here, and then reads what changed from the database after its last
/// sequence, so it never skips or repeats a change whatever order the wake-ups come in.
///
/// As a service it ends every open stream when shutdown begins, so the HTTP server can drain.
final class LiveHub: Service, Sendable {
    struct Listener: Sendable, Hashable {
        let id = UUID()
        let appId: String
        let userId: String
    }

    private let listeners = Mutex<[String: [UUID: AsyncStream<Void>.Continuation]]>([:])
    /// Streams one user may hold open on this instance.
    let maximumStreamsPerUser: Int

    init(maximumStreamsPerUser: Int = 10) {
        self.maximumStreamsPerUser = maximumStreamsPerUser
    }

    private static func key(_ appId: String, _ userId: String) -> String { "\(appId)\u{1F}\(userId)" }

    /// A stream of wake-ups for one user (wake-ups that arrive while the stream is busy collapse into one); nil when the
    /// user already holds `maximumStreamsPerUser` streams here.
    func subscribe(appId: String, userId: String) -> (Listener, AsyncStream<Void>)? {
        let listener = Listener(appId: appId, userId: userId)
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let taken = listeners.withLock { listeners -> Bool in
            let key = Self.key(appId, userId)
            guard (listeners[key]?.count ?? 0) < maximumStreamsPerUser else { return false }
            listeners[key, default: [:]][listener.id] = continuation
            return true
        }
        return taken ? (listener, stream) : nil
    }

    func unsubscribe(_ listener: Listener) {
        let continuation = listeners.withLock { all -> AsyncStream<Void>.Continuation? in
            let key = Self.key(listener.appId, listener.userId)
            let removed = all[key]?.removeValue(forKey: listener.id)
            if all[key]?.isEmpty == true { all[key] = nil }
            return removed
        }
        continuation?.finish()
    }

    func run() async throws {
        try? await gracefulShutdown()
        let all = listeners.withLock { listeners in
            defer { listeners = [:] }
            return listeners.values.flatMap(\.values)
        }
        for continuation in all { continuation.finish() }
    }

    /// The consumer handler of this instance's live queue.
    func handle(_ deliveries: [AMQPDelivery]) async -> [AMQPDisposition] {
        // No open stream on this instance (the usual case): nothing to wake, nothing to decode.
        guard listeners.withLock({ !$0.isEmpty }) else { return deliveries.map { _ in .ack } }
        var users = Set<String>()
        // A broadcast (no user) may be in the feed of any user of its app.
        var broadcastApps = Set<String>()
        for delivery in deliveries {
            guard let batch = try? ChangeEventBatch(delivery) else { continue }
            for event in batch.events {
                if event.userId.isEmpty {
                    broadcastApps.insert(Self.key(event.appId, ""))
                } else {
                    users.insert(Self.key(event.appId, event.userId))
                }
            }
        }
        let woken = listeners.withLock { all in
            users.flatMap { all[$0].map { Array($0.values) } ?? [] }
                + all.filter { key, _ in broadcastApps.contains { key.hasPrefix($0) } }.flatMap { Array($0.value.values) }
        }
        for continuation in woken { continuation.yield() }
        return deliveries.map { _ in .ack }
    }
}
