import NotifyModels
import NotifyTestSupport
import Synchronization
import Testing

@testable import PushDispatchCore

/// How a provider's in-flight slots are shared among apps and lanes.
@Suite("In-flight budget")
struct InFlightBudgetTests {
    private func slots(_ grant: InFlightBudget.Grant) throws -> InFlightBudget.Lease {
        guard case .slots(let lease) = grant else { throw TestFailure("expected slots, got \(grant)") }
        return lease
    }

    /// The lanes in the order their jobs got the slot.
    private final class GrantOrder: Sendable {
        let lanes = Mutex<[String]>([])
        func record(_ lane: String) { lanes.withLock { $0.append(lane) } }
    }

    /// Starts an acquire in a task of its own; the task's value is the grant.
    private func waiting(_ budget: InFlightBudget, _ appId: String, _ lane: PushLane = .interactive, wanted: Int) async -> Task<InFlightBudget.Grant, Never> {
        let task = Task { await budget.acquire(appId: appId, lane: lane, wanted: wanted) }
        // Long enough for the acquire to be queued.
        try? await Task.sleep(for: .milliseconds(50))
        return task
    }

    @Test("an app alone takes more than its share but leaves a share free; the next app gets its slots at once")
    func aloneLeavesAShareFree() async throws {
        let budget = InFlightBudget(capacity: 8, appShare: 2, slowAfter: .seconds(60))
        let first = try slots(await budget.acquire(appId: "a", lane: .interactive, wanted: 2))
        #expect(first.count == 2)
        let beyond = try slots(await budget.acquire(appId: "a", lane: .interactive, wanted: 100))
        #expect(beyond.count == 4, "alone beyond its share: all but a share")
        let other = try slots(await budget.acquire(appId: "b", lane: .interactive, wanted: 5))
        #expect(other.count == 2, "the next app: its share, at once")
        budget.release(first)
        budget.release(beyond)
        budget.release(other)
    }

    @Test("an app alone gets all but a share in one run, not its share first and the rest in a second run")
    func aloneInOneRun() async throws {
        let budget = InFlightBudget(capacity: 8, appShare: 2, slowAfter: .seconds(60))
        let run = try slots(await budget.acquire(appId: "a", lane: .interactive, wanted: 100))
        #expect(run.count == 6)
        let whole = try slots(await budget.acquire(appId: "b", lane: .interactive, wanted: 2))
        #expect(whole.count == 2, "the share left free")
        budget.release(run)
        budget.release(whole)
    }

    @Test("while another app waits, an app at its share gets no more slots; the waiting app gets the freed ones")
    func shareWhileOthersWait() async throws {
        let budget = InFlightBudget(capacity: 4, appShare: 2, slowAfter: .seconds(60))
        let a = try slots(await budget.acquire(appId: "a", lane: .interactive, wanted: 2))
        let b = try slots(await budget.acquire(appId: "b", lane: .interactive, wanted: 2))
        let moreA = await waiting(budget, "a", wanted: 1)
        let c = await waiting(budget, "c", wanted: 1)
        // One slot of b's comes back: c, below its share, gets it, not a, at its share.
        budget.release(b)
        let cLease = try slots(await c.value)
        #expect(cLease.count == 1)
        budget.release(a)
        let aLease = try slots(await moreA.value)
        #expect(aLease.count == 1)
        budget.release(cLease)
        budget.release(aLease)
    }

    @Test("an app at its share whose answers are late is parked, others are not")
    func slowAppIsParked() async throws {
        let budget = InFlightBudget(capacity: 8, appShare: 2, slowAfter: .milliseconds(20))
        let slow = try slots(await budget.acquire(appId: "slow", lane: .interactive, wanted: 2))
        try await Task.sleep(for: .milliseconds(40))
        guard case .park(let wait) = await budget.acquire(appId: "slow", lane: .interactive, wanted: 10) else {
            Issue.record("a slow app at its share was not parked")
            return
        }
        #expect(wait >= .seconds(1) && wait <= .seconds(30))
        let quick = try slots(await budget.acquire(appId: "quick", lane: .interactive, wanted: 2))
        #expect(quick.count == 2)
        budget.release(slow)
        budget.release(quick)
        // Its answers came: no longer slow.
        let again = try slots(await budget.acquire(appId: "slow", lane: .interactive, wanted: 1))
        budget.release(again)
    }

    @Test("interactive jobs are served first when both lanes wait, and every fourth grant goes to the bulk lane")
    func interactiveFirstBulkNotStarved() async throws {
        let budget = InFlightBudget(capacity: 1, appShare: 1, slowAfter: .seconds(60), bulkEvery: 4)
        let holding = try slots(await budget.acquire(appId: "x", lane: .interactive, wanted: 1))
        let order = GrantOrder()
        var tasks: [Task<Void, Never>] = []
        // One bulk job and five interactive ones (of five apps) wait for the single slot.
        let bulk = Task {
            if case .slots(let lease) = await budget.acquire(appId: "broadcaster", lane: .bulk, wanted: 1) {
                order.record("bulk")
                budget.release(lease)
            }
        }
        try await Task.sleep(for: .milliseconds(50))
        for app in 0..<5 {
            tasks.append(Task {
                if case .slots(let lease) = await budget.acquire(appId: "app\(app)", lane: .interactive, wanted: 1) {
                    order.record("interactive")
                    budget.release(lease)
                }
            })
            try await Task.sleep(for: .milliseconds(20))
        }
        budget.release(holding)
        await bulk.value
        for task in tasks { await task.value }
        #expect(order.lanes.withLock { $0 } == ["interactive", "interactive", "interactive", "bulk", "interactive", "interactive"])
    }

    @Test("a handler waits for room while as many jobs as the limit wait for slots")
    func roomToWaitHoldsBackNewBatches() async throws {
        let budget = InFlightBudget(capacity: 1, appShare: 1, slowAfter: .seconds(60), maximumWaiting: 2)
        let holding = try slots(await budget.acquire(appId: "a", lane: .interactive, wanted: 1))
        let queued = await waiting(budget, "b", wanted: 2)
        let admitted = Task { await budget.roomToWait(); return ContinuousClock.now }
        try await Task.sleep(for: .milliseconds(100))
        let released = ContinuousClock.now
        budget.release(holding)
        #expect(await admitted.value >= released, "a new batch was taken on while the limit's worth of jobs waited")
        budget.release(try slots(await queued.value))
    }
}
