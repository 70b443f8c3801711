import Foundation
import Logging
import NotifyAMQP
import NotifyModels
import NotifyRuntime
import NotifyWire
import ServiceLifecycle
import Synchronization

/// Tells this instance's open live streams that their user has new changes.
///
/// Every ingest instance has a transient queue on the `notify.changes` exchange and, while it holds streams, receives
/// every change batch; a stream is only woken here, and then reads what changed from the database after its last
/// sequence, so it never skips or repeats a change whatever order the wake-ups come in. With a `binding`, the queue
/// is unbound once no stream has been open for `unbindAfter`, and bound again before a new stream's first read.
///
/// As a service it ends every open stream when shutdown begins, so the HTTP server can drain.
final class LiveHub: Service, Sendable {
    struct Listener: Sendable, Hashable {
        let id = UUID()
        let appId: String
        let userId: String
    }

    private struct State {
        var listeners: [String: [UUID: AsyncStream<Void>.Continuation]] = [:]
        /// Since when no stream is open (nil while one is).
        var idleSince: ContinuousClock.Instant? = .now
    }

    private let state = Mutex(State())
    /// Streams one user may hold open on this instance.
    let maximumStreamsPerUser: Int
    private let binding: LiveQueueBinding?
    private let unbindAfter: Duration
    private let logger: Logger?

    init(maximumStreamsPerUser: Int = 10, binding: LiveQueueBinding? = nil, unbindAfter: Duration = .seconds(30), logger: Logger? = nil) {
        self.maximumStreamsPerUser = maximumStreamsPerUser
        self.binding = binding
        self.unbindAfter = unbindAfter
        self.logger = logger
    }

    private static func key(_ appId: String, _ userId: String) -> String { "\(appId)\u{1F}\(userId)" }

    /// A stream of wake-ups for one user (wake-ups that arrive while the stream is busy collapse into one); nil when the
    /// user already holds `maximumStreamsPerUser` streams here. Call `bindForStreams()` before the stream's first read.
    func subscribe(appId: String, userId: String) -> (Listener, AsyncStream<Void>)? {
        let listener = Listener(appId: appId, userId: userId)
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let taken = state.withLock { state -> Bool in
            let key = Self.key(appId, userId)
            guard (state.listeners[key]?.count ?? 0) < maximumStreamsPerUser else { return false }
            state.listeners[key, default: [:]][listener.id] = continuation
            state.idleSince = nil
            return true
        }
        return taken ? (listener, stream) : nil
    }

    /// Makes sure change batches reach this instance: returns once the live queue is bound (at once unless it was
    /// unbound for idleness); throws when it cannot be bound.
    func bindForStreams() async throws {
        try await binding?.bind()
    }

    func unsubscribe(_ listener: Listener) {
        let continuation = state.withLock { state -> AsyncStream<Void>.Continuation? in
            let key = Self.key(listener.appId, listener.userId)
            let removed = state.listeners[key]?.removeValue(forKey: listener.id)
            if state.listeners[key]?.isEmpty == true { state.listeners[key] = nil }
            if state.listeners.isEmpty && state.idleSince == nil { state.idleSince = .now }
            return removed
        }
        continuation?.finish()
    }

    /// Whether no stream has been open for `unbindAfter`.
    private var isIdleLongEnough: Bool {
        state.withLock { state in state.idleSince.map { ContinuousClock.now - $0 >= unbindAfter } ?? false }
    }

    func run() async throws {
        if let binding, unbindAfter > .zero {
            // Every `unbindAfter` while idle (the consumer binds the queue again whenever it reconnects).
            while !Task.isShuttingDownGracefully && !Task.isCancelled {
                await pauseUnlessShuttingDown(for: unbindAfter)
                guard !Task.isShuttingDownGracefully, isIdleLongEnough else { continue }
                do {
                    try await binding.unbind(if: { [self] in isIdleLongEnough })
                } catch {
                    logger?.warning("the live queue could not be unbound; change batches keep coming", metadata: ["error": "\(error)"])
                }
            }
        } else {
            try? await gracefulShutdown()
        }
        let all = state.withLock { state in
            defer { state.listeners = [:] }
            return state.listeners.values.flatMap(\.values)
        }
        for continuation in all { continuation.finish() }
    }

    /// The consumer handler of this instance's live queue.
    func handle(_ deliveries: [AMQPDelivery]) async -> [AMQPDisposition] {
        // No open stream on this instance (the usual case): nothing to wake, nothing to decode.
        guard state.withLock({ !$0.listeners.isEmpty }) else { return deliveries.map { _ in .ack } }
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
        let woken = state.withLock { state in
            let all = state.listeners
            return users.flatMap { all[$0].map { Array($0.values) } ?? [] }
                + all.filter { key, _ in broadcastApps.contains { key.hasPrefix($0) } }.flatMap { Array($0.value.values) }
        }
        for continuation in woken { continuation.yield() }
        return deliveries.map { _ in .ack }
    }
}
