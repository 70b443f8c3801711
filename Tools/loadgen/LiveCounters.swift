import Synchronization

/// Counters the publisher and the delivery poller update and the progress line reads.
final class LiveCounters: Sendable {
    struct Snapshot: Sendable {
        var sent = 0
        var accepted = 0
        /// Answered 429 or 503: refused, to be published again later.
        var refused = 0
        var failed = 0
        var delivered = 0
    }

    private let state = Mutex(Snapshot())

    var snapshot: Snapshot { state.withLock { $0 } }

    func addSent(_ count: Int) { state.withLock { $0.sent += count } }
    func addAnswered(accepted: Int, refused: Int = 0, failed: Int) {
        state.withLock {
            $0.accepted += accepted
            $0.refused += refused
            $0.failed += failed
        }
    }
    func setDelivered(_ count: Int) { state.withLock { $0.delivered = count } }
}
