import NotifyModels
import Synchronization

/// One provider's pushes in flight in this instance, shared by its lanes and its apps, so that no app's trouble slows
/// another's.
///
/// - At most `capacity` pushes are in flight at once.
/// - An app (in one lane) holds at most `appShare` of them while another app waits in that lane; alone it may take
///   more, but leaves `appShare` free for the next app to come.
/// - An app at its share whose oldest push in flight has waited longer than `slowAfter` for its answer (its provider
///   answers late, or not until the timeout) is slow: its further jobs are not held here but parked (`Grant.park`), for
///   as long as its oldest answer has taken (1–30 s), so they hold neither slots nor the consumer's prefetch.
/// - When slots free up, waiting interactive jobs are served first, but every `bulkEvery`-th grant goes to a waiting
///   bulk job, so a stream of one-to-one notifications slows a broadcast without stopping it. Within a lane the apps
///   take turns.
/// - At most `maximumWaiting` jobs wait for slots: a handler asks for room (`roomToWait`) before it takes a batch on,
///   so the consumers stop taking messages while the provider is behind (the broker holds them, not this process).
final class InFlightBudget: Sendable {
    /// Slots taken at once for a run of one app's jobs; `release` gives them back.
    struct Lease: Sendable {
        fileprivate let holder: Holder
        fileprivate let token: UInt64
        let count: Int
    }

    /// What an app's jobs get: slots for the first `count` of them, or a wait elsewhere for all of them.
    enum Grant: Sendable {
        case slots(Lease)
        case park(for: Duration)
    }

    fileprivate struct Holder: Hashable {
        var appId: String
        var lane: PushLane
    }

    private struct Waiter {
        var wanted: Int
        var continuation: CheckedContinuation<Grant, Never>
    }

    private struct State {
        var inFlight = 0
        var held: [Holder: Int] = [:]
        /// When each run of a holder's pushes in flight started, by lease token.
        var started: [Holder: [UInt64: ContinuousClock.Instant]] = [:]
        var waiting: [Holder: [Waiter]] = [:]
        /// Per lane, the holders with waiters in the order they take turns.
        var turns: [PushLane: [Holder]] = [:]
        var nextToken: UInt64 = 0
        var interactiveGrantsSinceBulk = 0
        /// Jobs waiting for slots (the runs that waiters want), and the handlers waiting for room below the limit.
        var waitingJobs = 0
        var waitingForRoom: [CheckedContinuation<Void, Never>] = []
    }

    let capacity: Int
    let appShare: Int
    let slowAfter: Duration
    let bulkEvery: Int
    let maximumWaiting: Int
    private let state = Mutex(State())

    init(capacity: Int, appShare: Int, slowAfter: Duration = .seconds(1), bulkEvery: Int = 4, maximumWaiting: Int? = nil) {
        self.capacity = max(capacity, 1)
        self.appShare = min(max(appShare, 1), max(capacity, 1))
        self.slowAfter = slowAfter
        self.bulkEvery = max(bulkEvery, 1)
        self.maximumWaiting = maximumWaiting ?? 8 * max(capacity, 1)
    }

    /// Returns once fewer than `maximumWaiting` jobs wait for slots.
    func roomToWait() async {
        // With room, at once: the task is not suspended and enqueued again (a thread wake-up per batch).
        if state.withLock({ $0.waitingJobs < maximumWaiting }) { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let hasRoom = state.withLock { state in
                if state.waitingJobs < maximumWaiting { return true }
                state.waitingForRoom.append(continuation)
                return false
            }
            if hasRoom { continuation.resume() }
        }
    }

    /// Slots for up to `wanted` of an app's jobs in a lane (at least one), once the rules above allow; or a park.
    func acquire(appId: String, lane: PushLane, wanted: Int) async -> Grant {
        let holder = Holder(appId: appId, lane: lane)
        // Granted now (no one waits before it): answered without suspending the task, which would be enqueued again.
        if let granted = state.withLock({ state -> Grant? in
            if let park = parking(holder, in: state, now: .now) { return park }
            guard state.turns[lane]?.isEmpty ?? true, state.waitingJobs == 0 else { return nil }
            return grant(max(wanted, 1), to: holder, alone: true, &state, now: .now).map { .slots($0) }
        }) {
            return granted
        }
        return await withCheckedContinuation { continuation in
            let (grants, handlers) = state.withLock { state -> ([(CheckedContinuation<Grant, Never>, Grant)], [CheckedContinuation<Void, Never>]) in
                if let park = parking(holder, in: state, now: .now) { return ([(continuation, park)], []) }
                if state.waiting[holder] == nil { state.turns[lane, default: []].append(holder) }
                state.waiting[holder, default: []].append(Waiter(wanted: max(wanted, 1), continuation: continuation))
                state.waitingJobs += max(wanted, 1)
                return (grantWaiting(&state), self.roomMade(&state))
            }
            for (waiter, grant) in grants { waiter.resume(returning: grant) }
            for handler in handlers { handler.resume() }
        }
    }

    /// Gives a lease's slots back (its pushes were answered) and hands them to waiting jobs.
    func release(_ lease: Lease) {
        let (grants, handlers) = state.withLock { state -> ([(CheckedContinuation<Grant, Never>, Grant)], [CheckedContinuation<Void, Never>]) in
            state.inFlight -= lease.count
            state.held[lease.holder, default: 0] -= lease.count
            if state.held[lease.holder] == 0 { state.held[lease.holder] = nil }
            state.started[lease.holder]?[lease.token] = nil
            if state.started[lease.holder]?.isEmpty == true { state.started[lease.holder] = nil }
            return (grantWaiting(&state), self.roomMade(&state))
        }
        for (waiter, grant) in grants { waiter.resume(returning: grant) }
        for handler in handlers { handler.resume() }
    }

    /// The handlers waiting for room, once there is some.
    private func roomMade(_ state: inout State) -> [CheckedContinuation<Void, Never>] {
        guard state.waitingJobs < maximumWaiting, !state.waitingForRoom.isEmpty else { return [] }
        defer { state.waitingForRoom = [] }
        return state.waitingForRoom
    }

    /// The park for a holder's jobs if it is slow: at its share, its oldest push in flight unanswered for `slowAfter`.
    private func parking(_ holder: Holder, in state: State, now: ContinuousClock.Instant) -> Grant? {
        guard state.held[holder, default: 0] >= appShare, let oldest = state.started[holder]?.values.min() else { return nil }
        let waited = now - oldest
        guard waited > slowAfter else { return nil }
        return .park(for: min(max(waited, .seconds(1)), .seconds(30)))
    }

    /// Serves waiters while slots are free, in the lanes' order and the apps' turns.
    private func grantWaiting(_ state: inout State) -> [(CheckedContinuation<Grant, Never>, Grant)] {
        var grants: [(CheckedContinuation<Grant, Never>, Grant)] = []
        let now = ContinuousClock.now
        while state.inFlight < capacity {
            let bulkWaits = state.turns[.bulk]?.isEmpty == false
            let bulkFirst = bulkWaits && state.interactiveGrantsSinceBulk >= bulkEvery - 1
            let lanes: [PushLane] = bulkFirst ? [.bulk, .interactive] : [.interactive, .bulk]
            var served: (lane: PushLane, grants: [(CheckedContinuation<Grant, Never>, Grant)])?
            for lane in lanes {
                if let granted = grantNext(in: lane, &state, now: now) {
                    served = (lane, granted)
                    break
                }
            }
            guard let (lane, granted) = served else { break }
            grants += granted
            if lane == .bulk {
                state.interactiveGrantsSinceBulk = 0
            } else if bulkWaits {
                state.interactiveGrantsSinceBulk += 1
            }
        }
        return grants
    }

    /// Serves the next holder in the lane's turns that may take a slot (or must park); nil if none may.
    private func grantNext(in lane: PushLane, _ state: inout State, now: ContinuousClock.Instant) -> [(CheckedContinuation<Grant, Never>, Grant)]? {
        let holders = state.turns[lane] ?? []
        for (position, holder) in holders.enumerated() {
            guard var waiters = state.waiting[holder], !waiters.isEmpty else { continue }
            if let park = parking(holder, in: state, now: now) {
                // Every waiting job of a slow app is parked at once.
                state.waitingJobs -= waiters.reduce(0) { $0 + $1.wanted }
                state.waiting[holder] = nil
                state.turns[lane]?.remove(at: position)
                return waiters.map { ($0.continuation, park) }
            }
            guard let lease = grant(waiters[0].wanted, to: holder, alone: holders.count == 1, &state, now: now) else { continue }
            let waiter = waiters.removeFirst()
            // The rest of the run asks again at once, as a new waiter.
            state.waitingJobs -= waiter.wanted
            // The holder goes to the back of the turns (or leaves them, with no one else of it waiting).
            state.turns[lane]?.remove(at: position)
            if waiters.isEmpty {
                state.waiting[holder] = nil
            } else {
                state.waiting[holder] = waiters
                state.turns[lane]?.append(holder)
            }
            return [(waiter.continuation, .slots(lease))]
        }
        return nil
    }

    /// Takes slots for up to `wanted` of a holder's jobs, as many as its share allows; nil if it may take none now.
    private func grant(
        _ wanted: Int, to holder: Holder, alone: Bool, _ state: inout State, now: ContinuousClock.Instant
    ) -> Lease? {
        let held = state.held[holder, default: 0]
        let free = capacity - state.inFlight
        // Alone, an app may go beyond its share, in one run, but leaves a share free for the next app to come without
        // waiting for its answers.
        let withinShare = held < appShare ? min(free, appShare - held) : 0
        let allowed = alone ? max(withinShare, free - appShare) : withinShare
        guard allowed > 0 else { return nil }
        let count = min(wanted, allowed)
        let token = state.nextToken
        state.nextToken &+= 1
        state.inFlight += count
        state.held[holder] = held + count
        state.started[holder, default: [:]][token] = now
        return Lease(holder: holder, token: token, count: count)
    }
}
