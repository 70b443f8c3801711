import Foundation
import NIOCore

/// Sends a run's requests, paced to the rate schedule (the request starting at notification n is due at the schedule's
/// offset of n: n / rate seconds after the start at a single rate) with at most `concurrency` in flight, and records
/// what happened to every notification. It runs on one event loop, driven by timers and answers, without a task per
/// request, from `start()` until it hands over the outcome.
final class PublishPump {
    private let eventLoop: any EventLoop
    private let settings: Publisher.Settings
    private let bodies: NotificationBodies
    private let sender: any PublishSender
    private let counters: LiveCounters
    private let finished: (Publisher.Outcome) -> Void
    private var outcome: Publisher.Outcome
    private var startedAt = NIODeadline.now()
    private var deadline = NIODeadline.now()
    private var next = 0
    private var requests = 0
    private var inFlight = 0
    private var sendingEnded = false
    private var handedOver = false
    private var wakeUpScheduled = false
    /// Set while `pump` runs, so that an answer completing inside `send` does not start a second loop.
    private var pumping = false
    private var transportErrorShown = false

    init(
        eventLoop: any EventLoop, settings: Publisher.Settings, bodies: NotificationBodies, sender: any PublishSender,
        counters: LiveCounters, finished: @escaping (Publisher.Outcome) -> Void
    ) {
        self.eventLoop = eventLoop
        self.settings = settings
        self.bodies = bodies
        self.sender = sender
        self.counters = counters
        self.finished = finished
        outcome = Publisher.Outcome(
            ids: Array(repeating: nil, count: settings.count), acceptedAt: Array(repeating: nil, count: settings.count),
            statuses: Array(repeating: Publisher.Outcome.notSent, count: settings.count))
    }

    func start() {
        startedAt = .now()
        let (seconds, attoseconds) = settings.durationLimit.components
        deadline = startedAt + .seconds(seconds) + .nanoseconds(attoseconds / 1_000_000_000)
        outcome.startedAt = Date()
        pump()
    }

    /// Sends every request that is due while fewer than `concurrency` are in flight; then waits for the next due
    /// time or answer, or, once all was sent and answered, hands over the outcome.
    private func pump() {
        guard !pumping else { return }
        pumping = true
        defer { pumping = false }
        while !sendingEnded {
            if let seconds = settings.schedule.offset(of: next) {
                // Never later than the deadline, which stops the run anyway.
                let offset = min(seconds * 1e9, Double((deadline - startedAt).nanoseconds))
                let due = startedAt + .nanoseconds(Int64(offset.rounded()))
                if due > .now() {
                    wakeUp(at: due)
                    return
                }
            }
            if .now() >= deadline {
                outcome.stoppedByDurationLimit = true
                endSending()
                break
            }
            if settings.stop?.isStopped == true {
                endSending()
                break
            }
            if inFlight >= settings.concurrency { return }
            sendNext()
            if next >= settings.count { endSending() }
        }
        if inFlight == 0 && !handedOver {
            handedOver = true
            outcome.endedAt = Date()
            sender.close()
            finished(outcome)
        }
    }

    private func sendNext() {
        let first = next
        let count = min(settings.batch, settings.count - next)
        next += count
        requests += 1
        inFlight += 1
        counters.addSent(count)
        sender.send(PublishRequest(first: first, count: count, body: bodies.body(first: first, count: count))) { result in
            self.record(result)
            self.pump()
        }
    }

    private func endSending() {
        sendingEnded = true
        outcome.sent = next
        outcome.requests = requests
    }

    private func wakeUp(at due: NIODeadline) {
        guard !wakeUpScheduled else { return }
        wakeUpScheduled = true
        eventLoop.assumeIsolated().scheduleTask(deadline: due) {
            self.wakeUpScheduled = false
            self.pump()
        }
    }

    private func record(_ result: PublishResult) {
        inFlight -= 1
        var accepted = 0, refused = 0
        for (offset, item) in result.items.enumerated() {
            let seq = result.first + offset
            if result.status == nil {
                outcome.statuses[seq] = Publisher.Outcome.transportError
            } else if item.status == 202, let id = item.id {
                outcome.ids[seq] = id
                outcome.acceptedAt[seq] = result.answeredAt
                outcome.statuses[seq] = 202
                accepted += 1
            } else if item.status == 202 || item.status == -1 {
                outcome.statuses[seq] = Publisher.Outcome.unreadable
            } else {
                outcome.statuses[seq] = Int16(clamping: item.status)
                if AnswerCounts.isRefusal(item.status) { refused += 1 }
            }
        }
        outcome.answers.append(Publisher.Answer(
            first: result.first, count: result.count, status: result.status ?? Int(Publisher.Outcome.transportError),
            elapsed: result.elapsed, answeredAt: result.answeredAt, retryAfter: result.retryAfter))
        if let error = result.transportError, !transportErrorShown {
            transportErrorShown = true
            FileHandle.standardError.write(Data("loadgen: publish failed: \(error)\n".utf8))
        }
        counters.addAnswered(accepted: accepted, refused: refused, failed: result.count - accepted - refused)
    }
}
