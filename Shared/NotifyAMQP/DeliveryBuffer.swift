import Synchronization

/// Deliveries the connection thread received and the handler has not taken yet.
/// `next` hands out everything waiting (up to a batch size), so a busy handler gets bigger batches.
final class DeliveryBuffer: Sendable {
    private struct State {
        var items: [AMQPDelivery] = []
        var waiter: CheckedContinuation<[AMQPDelivery]?, Never>?
        var finished = false
        var accepting = true
        /// Batches handed out and not yet reported finished.
        var handling = 0
    }

    private let maximumBatch: Int
    private let overlapsOnlyWhenFull: Bool
    private let state = Mutex<State>(State())

    /// - Parameter overlapsOnlyWhenFull: while a batch is being handled, hand out another only once a full one
    ///   waits, so that light load is handled in whole batches rather than split between overlapping ones.
    init(maximumBatch: Int, overlapsOnlyWhenFull: Bool) {
        self.maximumBatch = maximumBatch
        self.overlapsOnlyWhenFull = overlapsOnlyWhenFull
    }

    /// Whether new deliveries are still wanted (false once shutdown began).
    var isAccepting: Bool { state.withLock { $0.accepting } }

    func append(_ deliveries: [AMQPDelivery]) {
        guard !deliveries.isEmpty else { return }
        handOut { state in
            guard state.accepting else { return false }
            state.items.append(contentsOf: deliveries)
            return true
        }
    }

    /// The next batch; nil once `finish` was called and nothing is left to hand out.
    func next() async -> [AMQPDelivery]? {
        await withCheckedContinuation { continuation in
            let ready: [AMQPDelivery]?? = state.withLock { state in
                if isReady(state) { return .some(take(&state)) }
                if state.finished { return .some(nil) }
                state.waiter = continuation
                return .none
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// A batch that `next` handed out was handled.
    func batchFinished() {
        handOut { state in
            state.handling -= 1
            return true
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

    /// Applies `change` and, if it did anything and a batch is now ready for a waiting `next`, hands it over.
    private func handOut(after change: (inout State) -> Bool) {
        let (waiter, batch): (CheckedContinuation<[AMQPDelivery]?, Never>?, [AMQPDelivery]) = state.withLock { state in
            guard change(&state), let waiter = state.waiter, isReady(state) else { return (nil, []) }
            state.waiter = nil
            return (waiter, take(&state))
        }
        waiter?.resume(returning: batch)
    }

    private func isReady(_ state: State) -> Bool {
        guard !state.items.isEmpty else { return false }
        return !overlapsOnlyWhenFull || state.handling == 0 || state.items.count >= maximumBatch
    }

    private func take(_ state: inout State) -> [AMQPDelivery] {
        state.handling += 1
        if state.items.count <= maximumBatch {
            defer { state.items = [] }
            return state.items
        }
        let batch = Array(state.items.prefix(maximumBatch))
        state.items.removeFirst(maximumBatch)
        return batch
    }
}
