import Synchronization

/// Something that happens once, awaited by any number of tasks; a wait that starts after it happened returns at once.
final class CompletionSignal: Sendable {
    private struct State {
        var completed = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex<State>(State())

    /// Marks it happened and wakes everyone waiting; later calls do nothing.
    func complete() {
        let waiters = state.withLock { state in
            state.completed = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let completed = state.withLock { state in
                if state.completed { return true }
                state.waiters.append(continuation)
                return false
            }
            if completed { continuation.resume() }
        }
    }
}
