import Foundation
import Synchronization

/// One lane per app for webhook events, so that an app's failing or slow receiver holds only its own events.
///
/// An app's events are POSTed one at a time, in the order they arrived (each takes a ticket in that order, `reserve`,
/// before its batch is handled, however the batches' tasks are scheduled). When an attempt fails and will be tried
/// again, the app backs off: the failed event waits in the delay queue until its retry is due, and the app's events
/// behind it, or arriving meanwhile, wait there too, each due just after the one before, so they come back in their
/// order and no app's backlog holds the consumer's prefetch. A fresh event of an app with events waiting in the delay
/// queue goes behind them. An app whose receiver is slow (more than `maximumQueued` events waiting in its lane) has its
/// next events wait `laneFullWait` in the delay queue likewise.
///
/// The order holds among the events one push-dispatch instance handles; a restart forgets what waits in the delay
/// queue, so an event retried before it may then come after a later one.
final class WebhookLanes: Sendable {
    /// An event's place in its app's lane.
    struct Ticket: Sendable, Hashable {
        let appId: String
        let number: UInt64
    }

    private struct Parked {
        var returning: Bool
        var now: Date
        var continuation: CheckedContinuation<Date?, Never>
    }

    private struct Lane {
        /// A failed attempt backs the app off until then.
        var backoffUntil: Date?
        /// The app's events this instance sent to the delay queue that have not come back.
        var waiting = 0
        /// The earliest ticket among them (while any wait): a fresh event that arrived after it waits behind them.
        var waitingFrom: UInt64?
        /// The earliest due time the app's next waiting event may have (after every one that waits).
        var nextDue: Date = .distantPast
        /// An event holds the lane (its attempt is under way).
        var busy = false
        /// Tickets not yet decided, in arrival order.
        var order: [UInt64] = []
        /// The events that asked for their turn, by ticket.
        var parked: [UInt64: Parked] = [:]

        var isIdle: Bool { backoffUntil == nil && waiting == 0 && !busy && order.isEmpty }

        /// The due time of the event with `ticket` that waits, at `earliest` or after the last one that waits.
        mutating func scheduleWait(_ ticket: UInt64, earliest: Date) -> Date {
            let due = max(earliest, nextDue)
            nextDue = due.addingTimeInterval(0.001)
            waiting += 1
            waitingFrom = min(waitingFrom ?? ticket, ticket)
            return due
        }

        /// One event came back from the delay queue (or never got there).
        mutating func endWait() {
            waiting = max(waiting - 1, 0)
            if waiting == 0 { waitingFrom = nil }
        }

        /// Decides the events at the head of the lane that asked for their turn, in order, until one holds the lane or
        /// the head has not asked yet; answers whom to resume, and with what.
        mutating func decide() -> [(CheckedContinuation<Date?, Never>, Date?)] {
            var decided: [(CheckedContinuation<Date?, Never>, Date?)] = []
            while !busy, let head = order.first, let event = parked.removeValue(forKey: head) {
                order.removeFirst()
                if event.returning { endWait() }
                if let until = backoffUntil, until <= event.now { backoffUntil = nil }
                if let until = backoffUntil {
                    decided.append((event.continuation, scheduleWait(head, earliest: until)))
                } else if !event.returning, let from = waitingFrom, head > from {
                    decided.append((event.continuation, scheduleWait(head, earliest: event.now)))
                } else {
                    busy = true
                    decided.append((event.continuation, nil))
                }
            }
            return decided
        }
    }

    private struct State {
        var lanes: [String: Lane] = [:]
        var nextTicket: UInt64 = 0
    }

    private let state = Mutex(State())
    /// Events an app may have waiting in its lane behind the one being sent before more wait in the delay queue.
    let maximumQueued: Int
    /// How long an event waits in the delay queue when its app's lane is full.
    let laneFullWait: TimeInterval

    init(maximumQueued: Int = 4, laneFullWait: TimeInterval = 1) {
        self.maximumQueued = maximumQueued
        self.laneFullWait = laneFullWait
    }

    /// The event's place in `appId`'s lane: called in the order the events arrived, before they are handled.
    func reserve(appId: String) -> Ticket {
        state.withLock { state in
            state.nextTicket += 1
            state.lanes[appId, default: Lane()].order.append(state.nextTicket)
            return Ticket(appId: appId, number: state.nextTicket)
        }
    }

    /// Nil once the event holds its app's lane (it is attempted, then `leave` is called), or the time it is due when
    /// it waits in the delay queue instead. `returning`: the event comes back from the delay queue.
    func admit(_ ticket: Ticket, returning: Bool, now: Date = Date()) async -> Date? {
        await withCheckedContinuation { (continuation: CheckedContinuation<Date?, Never>) in
            let decided = state.withLock { state -> [(CheckedContinuation<Date?, Never>, Date?)] in
                var lane = state.lanes[ticket.appId, default: Lane()]
                defer { state.lanes[ticket.appId] = lane.isIdle ? nil : lane }
                let isHead = lane.order.first == ticket.number
                if !isHead && lane.busy && lane.parked.count >= maximumQueued {
                    // The lane is full: this one waits in the delay queue, and the app's later events go behind it.
                    lane.order.removeAll { $0 == ticket.number }
                    return [(continuation, lane.scheduleWait(ticket.number, earliest: now.addingTimeInterval(laneFullWait)))]
                }
                lane.parked[ticket.number] = Parked(returning: returning, now: now, continuation: continuation)
                return lane.decide()
            }
            for (waiter, decision) in decided { waiter.resume(returning: decision) }
        }
    }

    /// An event this lane sent to the delay queue did not get there (it was requeued instead).
    func forgetWait(appId: String) {
        state.withLock { state in
            guard var lane = state.lanes[appId] else { return }
            lane.endWait()
            state.lanes[appId] = lane.isIdle ? nil : lane
        }
    }

    /// Ends the attempt of the event holding its app's lane. `retryAt`: it failed and is tried again then, so the app
    /// backs off until then and the events behind it wait after it; nil: delivered or given up. Answers the retry's due
    /// time (`retryAt`, or later when events already wait).
    @discardableResult
    func leave(_ ticket: Ticket, retryAt: Date?) -> Date? {
        let appId = ticket.appId
        let (decided, due) = state.withLock { state -> ([(CheckedContinuation<Date?, Never>, Date?)], Date?) in
            var lane = state.lanes[appId, default: Lane()]
            defer { state.lanes[appId] = lane.isIdle ? nil : lane }
            var due: Date?
            if let retryAt {
                due = lane.scheduleWait(ticket.number, earliest: retryAt)
                lane.backoffUntil = due
            }
            lane.busy = false
            return (lane.decide(), due)
        }
        for (waiter, decision) in decided { waiter.resume(returning: decision) }
        return due
    }
}
