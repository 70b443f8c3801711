import NotifyRuntime
import Synchronization

/// Fanout's two lanes on one process: the interactive one (one-to-one changes, `ChangeFanoutHandler`) is served first.
/// The broadcast lane (`BroadcastFanoutHandler`) waits before each page of an audience while an interactive batch is
/// in hand, for at most `longestWait`, so that a steady stream of one-to-one changes slows a broadcast but never stops it.
final class FanoutLanes: Sendable {
    /// An interactive batch in hand, until `end()`.
    struct InteractiveBatch {
        fileprivate let lanes: FanoutLanes

        func end() {
            if lanes.interactiveBatches.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 { lanes.interactiveIdle.nudge() }
        }
    }

    let longestWait: Duration
    private let interactiveBatches = Atomic<Int>(0)
    private let interactiveIdle = Nudge()

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
        while interactiveBatches.load(ordering: .acquiring) > 0 {
            let left = deadline - .now
            if left <= .zero { return }
            await interactiveIdle.pause(upTo: left)
        }
    }
}
