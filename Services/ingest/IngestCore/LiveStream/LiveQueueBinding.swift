import Foundation
import Logging
import NotifyAMQP
import NotifyModels
import Synchronization

/// Binds this instance's live queue to `notify.changes` only while the instance holds live streams, over AMQP on a
/// connection of ingest's own (queue.bind, queue.unbind: no management API), so that an instance without streams (the
/// usual case) is not sent every change batch: each batch storage publishes would otherwise be queued, delivered and
/// acknowledged once per ingest instance for nothing.
///
/// The queue is bound when the consumer declares it (at start and after every reconnect); `unbind()` takes the binding
/// away once the hub has been idle a while, and `bind()` puts it back before a new stream reads its first changes, so
/// a change committed after that read is always routed here. The calls run one after another, in the order asked:
/// a bind asked while an unbind is under way is made after it.
final class LiveQueueBinding: Sendable {
    private let bindings: AMQPQueueBindings
    private let binding: AMQPTopology.Binding
    private let logger: Logger
    /// Whether this instance took the binding away (and has not put it back); the last call asked, to chain the next.
    private let state = Mutex<(unbound: Bool, last: Task<Void, Never>?)>((false, nil))

    init(bindings: AMQPQueueBindings, queue: String, logger: Logger) {
        self.bindings = bindings
        binding = AMQPTopology.Binding(queue: queue, exchange: QueueNames.changesExchange, routingKey: "")
        self.logger = logger
    }

    /// Binds the queue again if this instance took the binding away; throws `AMQPError` when the broker cannot be
    /// reached or refuses.
    func bind() async throws {
        try await serially { [self] in
            guard state.withLock({ $0.unbound }) else { return }
            try await bindings.bind(binding)
            state.withLock { $0.unbound = false }
            logger.debug("live queue bound: a stream is open")
        }
    }

    /// Takes the binding away if `isIdle` still holds when its turn comes (a binding already gone is fine).
    func unbind(if isIdle: @escaping @Sendable () -> Bool) async throws {
        try await serially { [self] in
            guard isIdle() else { return }
            try await bindings.unbind(binding)
            state.withLock { $0.unbound = true }
        }
    }

    /// Runs `operation` after every operation asked before it has finished.
    private func serially(_ operation: @escaping @Sendable () async throws -> Void) async throws {
        let task = state.withLock { state -> Task<Void, any Error> in
            let previous = state.last
            let task = Task<Void, any Error> {
                await previous?.value
                try await operation()
            }
            state.last = Task { _ = try? await task.value }
            return task
        }
        try await task.value
    }
}
