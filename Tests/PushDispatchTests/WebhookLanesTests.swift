import Foundation
import Testing

@testable import PushDispatchCore

/// Each app's webhook events in a lane of their own: one app's failing receiver holds only its own events, which keep
/// their order behind its retry.
@Suite struct WebhookLanesTests {
    private let start = Date(timeIntervalSince1970: 1_800_000_000)

    @Test("another app's event is attempted while an app's attempt is under way; the app's next event queues behind it")
    func appsDoNotWaitForEachOther() async throws {
        let lanes = WebhookLanes()
        #expect(await lanes.admit(appId: "w", returning: false, now: start) == nil)
        #expect(await lanes.admit(appId: "y", returning: false, now: start) == nil, "app y is not held by app w")
        let queued = Task { await lanes.admit(appId: "w", returning: false, now: start) }
        try await Task.sleep(for: .milliseconds(50))
        lanes.leave(appId: "w", retryAt: nil)
        #expect(await queued.value == nil, "the lane is handed to w's next event once the first was delivered")
    }

    @Test("a failed attempt backs its app off: the events queued behind it and arriving meanwhile wait after it, in order")
    func failureKeepsTheOrder() async throws {
        let lanes = WebhookLanes()
        #expect(await lanes.admit(appId: "w", returning: false, now: start) == nil)
        let second = Task { await lanes.admit(appId: "w", returning: false, now: start) }
        try await Task.sleep(for: .milliseconds(50))
        let retry = try #require(lanes.leave(appId: "w", retryAt: start.addingTimeInterval(5)))
        #expect(retry == start.addingTimeInterval(5))
        let secondDue = try #require(await second.value)
        #expect(secondDue > retry, "the event queued behind the failed one waits after it")
        let third = try #require(await lanes.admit(appId: "w", returning: false, now: start.addingTimeInterval(1)))
        #expect(third > secondDue, "an event arriving during the backoff waits after both")

        // Back when due: the failed one first (attempted), then the others in turn; a fresh one still goes behind them.
        #expect(await lanes.admit(appId: "w", returning: true, now: retry) == nil)
        lanes.leave(appId: "w", retryAt: nil)
        let fresh = try #require(await lanes.admit(appId: "w", returning: false, now: retry), "two still wait in the delay queue")
        #expect(fresh > third)
        #expect(await lanes.admit(appId: "w", returning: true, now: secondDue) == nil)
        lanes.leave(appId: "w", retryAt: nil)
        #expect(await lanes.admit(appId: "w", returning: true, now: third) == nil)
        lanes.leave(appId: "w", retryAt: nil)
        #expect(await lanes.admit(appId: "w", returning: true, now: fresh) == nil)
        lanes.leave(appId: "w", retryAt: nil)
        #expect(await lanes.admit(appId: "w", returning: false, now: fresh) == nil, "nothing waits any more: attempted at once")
    }

    @Test("an app whose receiver is slow queues a few events in its lane; more wait in the delay queue")
    func fullLaneWaits() async throws {
        let lanes = WebhookLanes(maximumQueued: 1, laneFullWait: 1)
        #expect(await lanes.admit(appId: "w", returning: false, now: start) == nil)
        let queued = Task { await lanes.admit(appId: "w", returning: false, now: start) }
        try await Task.sleep(for: .milliseconds(50))
        let due = try #require(await lanes.admit(appId: "w", returning: false, now: start))
        #expect(due == start.addingTimeInterval(1))
        lanes.leave(appId: "w", retryAt: nil)
        #expect(await queued.value == nil)
    }
}
