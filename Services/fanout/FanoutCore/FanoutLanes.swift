import Synchronization

/// Fanout's two lanes on one process: the interactive one (one-to-one changes, `ChangeFanoutHandler`) is served first.
/// The broadcast lane (`BroadcastFanoutHandler`, several broadcasts at once) waits before each page of an audience while
/// an interactive batch is in hand, for at most `longestWait`, so that a steady stream of one-to-one changes slows a
/// broadcast but never stops it. The wait looks every 2 ms (at most 25 looks per page of 5,000 devices), which any
/// number of broadcasts may do at once.
final class FanoutLanes: Sendable {
    /// An interactive batch in hand, until `end()`.
    struct InteractiveBatch {
        fileprivate let lanes: FanoutLanes

        func end() {
            lanes.interactiveBatches.subtract(1, ordering: .releasing)
        }
    }

    let longestWait: Duration
    private let interactiveBatches = Atomic<Int>(0)

    init(longestWait: Duration = .milliseconds(50)) {
        self.longestWait = longestWait
    }

    func interactiveBatchStarted() -> InteractiveBatch {
        interactiveBatches.add(1, ordering: .acquiringAndReleasing)
        return InteractiveBatch(lanes: self)
    }

    /// Returns once no interactive batch is in hand, or after `longestWait`.
    func bulkTurn() async {
        let deadline = ContinuousClock.now + longestWait
        while interactiveBatches.load(ordering: .acquiring) > 0, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(2))
        }
    }
}
