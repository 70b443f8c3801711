import Foundation
import Testing

@testable import PushDispatchCore

/// Each app's webhook events in a lane of their own: one app's failing receiver holds only its own events, which keep
/// their order behind its retry.
@Suite struct WebhookLanesTests {
    private let start = Date(timeIntervalSince1970: 1_800_000_000)

    private actor OrderLog {
        var entries: [Int] = []
        func append(_ entry: Int) { entries.append(entry) }
    }

    @Test("another app's event is attempted while an app's attempt is under way; the app's next event queues behind it")
    func appsDoNotWaitForEachOther() async throws {
        let lanes = WebhookLanes()
        let first = lanes.reserve(appId: "w")
        #expect(await lanes.admit(first, returning: false, now: start) == nil)
        #expect(await lanes.admit(lanes.reserve(appId: "y"), returning: false, now: start) == nil, "app y is not held by app w")
        let next = lanes.reserve(appId: "w")
        let queued = Task { await lanes.admit(next, returning: false, now: start) }
        try await Task.sleep(for: .milliseconds(50))
        lanes.leave(first, retryAt: nil)
        #expect(await queued.value == nil, "the lane is handed to w's next event once the first was delivered")
    }

    @Test("an app's events take the lane in the order they arrived, whatever order their tasks ask in")
    func arrivalOrderHolds() async throws {
        let lanes = WebhookLanes()
        let (first, second, third) = (lanes.reserve(appId: "w"), lanes.reserve(appId: "w"), lanes.reserve(appId: "w"))
        let thirdTurn = Task { await lanes.admit(third, returning: false, now: start) }
        let secondTurn = Task { await lanes.admit(second, returning: false, now: start) }
        try await Task.sleep(for: .milliseconds(50))
        #expect(await lanes.admit(first, returning: false, now: start) == nil, "the first to arrive goes first, though it asked last")
        let order = OrderLog()
        let late = Task { if await thirdTurn.value == nil { await order.append(3) } }
        let early = Task { if await secondTurn.value == nil { await order.append(2) } }
        lanes.leave(first, retryAt: nil)
        await early.value
        #expect(await order.entries == [2], "only the second holds the lane")
        lanes.leave(second, retryAt: nil)
        await late.value
        #expect(await order.entries == [2, 3])
    }

    @Test("a failed attempt backs its app off: the events queued behind it and arriving meanwhile wait after it, in order")
    func failureKeepsTheOrder() async throws {
        let lanes = WebhookLanes()
        let failing = lanes.reserve(appId: "w")
        #expect(await lanes.admit(failing, returning: false, now: start) == nil)
        let behind = lanes.reserve(appId: "w")
        let second = Task { await lanes.admit(behind, returning: false, now: start) }
        try await Task.sleep(for: .milliseconds(50))
        let retry = try #require(lanes.leave(failing, retryAt: start.addingTimeInterval(5)))
        #expect(retry == start.addingTimeInterval(5))
        let secondDue = try #require(await second.value)
        #expect(secondDue > retry, "the event queued behind the failed one waits after it")
        let third = try #require(await lanes.admit(lanes.reserve(appId: "w"), returning: false, now: start.addingTimeInterval(1)))
        #expect(third > secondDue, "an event arriving during the backoff waits after both")

        // Back when due: the failed one first (attempted), then the others in turn; a fresh one still goes behind them.
        let back = lanes.reserve(appId: "w")
        #expect(await lanes.admit(back, returning: true, now: retry) == nil)
        lanes.leave(back, retryAt: nil)
        let fresh = try #require(await lanes.admit(lanes.reserve(appId: "w"), returning: false, now: retry), "two still wait in the delay queue")
        #expect(fresh > third)
        for due in [secondDue, third, fresh] {
            let returning = lanes.reserve(appId: "w")
            #expect(await lanes.admit(returning, returning: true, now: due) == nil)
            lanes.leave(returning, retryAt: nil)
        }
        #expect(await lanes.admit(lanes.reserve(appId: "w"), returning: false, now: fresh) == nil, "nothing waits any more: attempted at once")
    }

    @Test("an app whose receiver is slow queues a few events in its lane; more wait in the delay queue, after them")
    func fullLaneWaits() async throws {
        let lanes = WebhookLanes(maximumQueued: 1, laneFullWait: 1)
        let first = lanes.reserve(appId: "w")
        #expect(await lanes.admit(first, returning: false, now: start) == nil)
        let second = lanes.reserve(appId: "w")
        let queued = Task { await lanes.admit(second, returning: false, now: start) }
        try await Task.sleep(for: .milliseconds(50))
        let due = try #require(await lanes.admit(lanes.reserve(appId: "w"), returning: false, now: start))
        #expect(due == start.addingTimeInterval(1))
        lanes.leave(first, retryAt: nil)
        #expect(await queued.value == nil, "the event that arrived before the one sent to wait is not held behind it")
    }
}
