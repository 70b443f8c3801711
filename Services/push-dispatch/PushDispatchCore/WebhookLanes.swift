import Foundation
import Synchronization

/// One lane per app for webhook events, so that an app's failing or slow receiver holds only its own events.
///
/// An app's events are POSTed one at a time, in the order they arrive. When an attempt fails and will be tried again,
/// the app backs off: the failed event waits in the delay queue until its retry is due, and the app's events queued
/// behind it, or arriving meanwhile, wait there too, each due just after the one before, so they come back in their
/// order and no app's backlog holds the consumer's prefetch. A fresh event of an app with events waiting in the delay
/// queue goes behind them. An app whose receiver is slow (more than `maximumQueued` events queued in its lane) has its
/// next events wait `laneFullWait` in the delay queue likewise.
///
/// The order holds among the events one push-dispatch instance handles; a restart forgets what waits in the delay
/// queue, so an event retried before it may then come after a later one.
final class WebhookLanes: Sendable {
    private struct Lane {
        /// A failed attempt backs the app off until then.
        var backoffUntil: Date?
        /// The app's events this instance sent to the delay queue that have not come back.
        var waiting = 0
        /// The earliest due time the app's next waiting event may have (after every one that waits).
        var nextDue: Date = .distantPast
        /// An event holds the lane (its attempt is under way).
        var busy = false
        /// Events queued in the lane, in order: each is resumed with nil when the lane is handed to it, or with a due
        /// time when it must wait in the delay queue instead.
        var queued: [CheckedContinuation<Date?, Never>] = []

        var isIdle: Bool { backoffUntil == nil && waiting == 0 && !busy && queued.isEmpty }

        /// The due time of the next event to wait, at `earliest` or after the last one.
        mutating func scheduleWait(earliest: Date) -> Date {
            let due = max(earliest, nextDue)
            nextDue = due.addingTimeInterval(0.001)
            waiting += 1
            return due
        }
    }

    private let lanes = Mutex<[String: Lane]>([:])
    /// Events an app may have queued in its lane behind the one being sent before more wait in the delay queue.
    let maximumQueued: Int
    /// How long an event waits in the delay queue when its app's lane is full.
    let laneFullWait: TimeInterval

    init(maximumQueued: Int = 4, laneFullWait: TimeInterval = 1) {
        self.maximumQueued = maximumQueued
        self.laneFullWait = laneFullWait
    }

    /// Nil once the caller holds `appId`'s lane (it attempts the event, then calls `leave`), or the time the event is
    /// due when it must wait in the delay queue instead. `returning`: the event comes back from the delay queue.
    func admit(appId: String, returning: Bool, now: Date = Date()) async -> Date? {
        await withCheckedContinuation { (continuation: CheckedContinuation<Date?, Never>) in
            let decided = lanes.withLock { lanes -> Date?? in
                var lane = lanes[appId, default: Lane()]
                defer { lanes[appId] = lane.isIdle ? nil : lane }
                if returning { lane.waiting = max(lane.waiting - 1, 0) }
                if let until = lane.backoffUntil, until <= now { lane.backoffUntil = nil }
                if let until = lane.backoffUntil { return .some(lane.scheduleWait(earliest: until)) }
                if !returning && lane.waiting > 0 { return .some(lane.scheduleWait(earliest: now)) }
                if !lane.busy {
                    lane.busy = true
                    return .some(nil)
                }
                if lane.queued.count >= maximumQueued { return .some(lane.scheduleWait(earliest: now.addingTimeInterval(laneFullWait))) }
                lane.queued.append(continuation)
                return .none
            }
            if let decided { continuation.resume(returning: decided) }
        }
    }

    /// An event this lane sent to the delay queue did not get there (it was requeued instead).
    func forgetWait(appId: String) {
        lanes.withLock { lanes in
            guard var lane = lanes[appId] else { return }
            lane.waiting = max(lane.waiting - 1, 0)
            lanes[appId] = lane.isIdle ? nil : lane
        }
    }

    /// Ends the attempt of the event holding `appId`'s lane. `retryAt`: it failed and is tried again then, so the app
    /// backs off until then and the events queued behind it wait after it; nil: delivered or given up, and the lane goes
    /// to the next event. Answers the retry's due time (`retryAt`, or later when events already wait).
    @discardableResult
    func leave(appId: String, retryAt: Date?) -> Date? {
        let (resumed, due) = lanes.withLock { lanes -> ([(CheckedContinuation<Date?, Never>, Date?)], Date?) in
            var lane = lanes[appId, default: Lane()]
            defer { lanes[appId] = lane.isIdle ? nil : lane }
            guard let retryAt else {
                guard !lane.queued.isEmpty else {
                    lane.busy = false
                    return ([], nil)
                }
                return ([(lane.queued.removeFirst(), nil)], nil)
            }
            let due = lane.scheduleWait(earliest: retryAt)
            lane.backoffUntil = due
            let behind = lane.queued.map { ($0, Optional(lane.scheduleWait(earliest: due))) }
            lane.queued = []
            lane.busy = false
            return (behind, due)
        }
        for (continuation, decision) in resumed { continuation.resume(returning: decision) }
        return due
    }
}
