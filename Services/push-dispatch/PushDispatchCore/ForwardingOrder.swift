import Synchronization

/// Keeps the messages a `RetryForwarder` holds in several batches at once forwarded in the order they are due. Each
/// batch's task wakes for its own messages, and two tasks due a millisecond apart may wake in either order; with this,
/// a batch forwards a due message only once every message due before it, held by any batch, was forwarded (or given
/// back). Webhook events rely on it: an app's events wait in the delay queue each due just after the one before, and
/// come back to their lane in that order.
final class ForwardingOrder: Sendable {
    /// A held message's place: its due time, then the order it was taken in.
    struct Place: Comparable, Hashable, Sendable {
        var due: Int64
        var taken: UInt64

        static func < (a: Place, b: Place) -> Bool { (a.due, a.taken) < (b.due, b.taken) }
    }

    private struct State {
        var held: Set<Place> = []
        var taken: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Holds messages due at `dues`; answers their places, in the same order.
    func hold(_ dues: [Int64]) -> [Place] {
        state.withLock { state in
            dues.map { due in
                state.taken += 1
                let place = Place(due: due, taken: state.taken)
                state.held.insert(place)
                return place
            }
        }
    }

    /// How many of `places` (due, ascending) may be forwarded now: those before every other batch's held message.
    func forwardable(_ places: ArraySlice<Place>) -> Int {
        state.withLock { state in
            let own = Set(places)
            let earliestOther = state.held.lazy.filter { !own.contains($0) }.min()
            guard let earliestOther else { return places.count }
            return places.prefix { $0 < earliestOther }.count
        }
    }

    /// The messages at `places` were forwarded, or given back to their queue: no one waits for them any more.
    func release(_ places: some Sequence<Place>) {
        state.withLock { state in
            for place in places { state.held.remove(place) }
        }
    }
}
