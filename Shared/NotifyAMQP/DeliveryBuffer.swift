import Synchronization

/// Deliveries the connection thread received and the handler has not taken yet.
/// `next` hands out everything waiting (up to a batch size), so a busy handler gets bigger batches.
final class DeliveryBuffer: Sendable {
    private struct State {
        var items: [AMQPDelivery] = []
        var waiter: CheckedContinuation<[AMQPDelivery]?, Never>?
        var finished = false
        var accepting = true
    }

    private let state = Mutex<State>(State())

    /// Whether new deliveries are still wanted (false once shutdown began).
    var isAccepting: Bool { state.withLock { $0.accepting } }

    func append(_ deliveries: [AMQPDelivery], maximumBatch: Int) {
        guard !deliveries.isEmpty else { return }
        let (waiter, batch): (CheckedContinuation<[AMQPDelivery]?, Never>?, [AMQPDelivery]) = state.withLock { state in
            guard state.accepting else { return (nil, []) }
            state.items.append(contentsOf: deliveries)
            guard let waiter = state.waiter else { return (nil, []) }
            state.waiter = nil
            return (waiter, Self.take(&state.items, maximumBatch))
        }
        waiter?.resume(returning: batch)
    }

    /// The next batch; nil once `finish` was called and nothing is left to hand out.
    func next(maximumBatch: Int) async -> [AMQPDelivery]? {
        await withCheckedContinuation { continuation in
            let ready: [AMQPDelivery]?? = state.withLock { state in
                if !state.items.isEmpty { return .some(Self.take(&state.items, maximumBatch)) }
                if state.finished { return .some(nil) }
                state.waiter = continuation
                return .none
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// Drops deliveries of an earlier connection: the broker redelivers them.
    func dropDeliveries(before generation: UInt64) {
        state.withLock { state in
            state.items.removeAll { $0.tag.connectionGeneration < generation }
        }
    }

    /// Stops handing out work: deliveries not yet taken go back to the queue when the channel closes.
    func finish() {
        let waiter = state.withLock { state in
            state.accepting = false
            state.finished = true
            state.items = []
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    private static func take(_ items: inout [AMQPDelivery], _ maximum: Int) -> [AMQPDelivery] {
        if items.count <= maximum {
            defer { items = [] }
            return items
        }
        let batch = Array(items.prefix(maximum))
        items.removeFirst(maximum)
        return batch
    }
}
