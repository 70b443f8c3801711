import ServiceLifecycle
import Synchronization

/// Wakes one service loop that waits for work: the loop pauses with `pause(upTo:)` and anything that gives it work
/// calls `nudge()`. A nudge while the loop is busy is kept, so the next pause returns at once; many nudges before it
/// count as one. Lets a loop that used to poll on a short timer sleep until there is work, with the timer only as a
/// fallback (an idle process then wakes rarely, instead of several times a second).
public final class Nudge: Sendable {
    private struct State {
        var nudged = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    public init() {}

    /// Ends the loop's pause now, or its next pause at once.
    public func nudge() {
        let waiter = state.withLock { state in
            guard let waiter = state.waiter else {
                state.nudged = true
                return nil as CheckedContinuation<Void, Never>?
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns when nudged (since the last pause, or during this one), after `timeout`, or when graceful shutdown
    /// begins. For one loop at a time.
    public func pause(upTo timeout: Duration) async {
        let nudged = state.withLock { state in
            defer { state.nudged = false }
            return state.nudged
        }
        guard !nudged else { return }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.waitForNudge() }
            group.addTask { await pauseUnlessShuttingDown(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }

    private func waitForNudge() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state in
                    if state.nudged || Task.isCancelled {
                        state.nudged = false
                        return true
                    }
                    state.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
    }
}
