import Testing

@testable import NotifyStore

/// How ingest instances share poll sources: each instance's share, the leases it takes and gives back, and the lock
/// keys as `pg_locks` shows them.
@Suite struct PollLeasePlanTests {
    @Test("a share is ceil(sources / pollers); alone, an instance takes every source")
    func shares() {
        #expect(PollLeasePlan.share(sources: 5, pollers: 2) == 3)
        #expect(PollLeasePlan.share(sources: 4, pollers: 2) == 2)
        #expect(PollLeasePlan.share(sources: 1, pollers: 3) == 1)
        #expect(PollLeasePlan.share(sources: 0, pollers: 3) == 0)
        #expect(PollLeasePlan.share(sources: 7, pollers: 1) == 7)
        #expect(PollLeasePlan.share(sources: 7, pollers: 0) == 7, "a count not read yet holds no instance back")
    }

    @Test("below its share an instance tries free sources in its own order, never one another session holds")
    func takesFreeSourcesUpToItsShare() {
        let plan = PollLeasePlan.make(sources: [1, 2, 3, 4, 5], held: [3], heldElsewhere: [1], pollers: 2)
        #expect(plan == PollLeasePlan(take: [2, 4], release: []))
        let full = PollLeasePlan.make(sources: [1, 2, 3, 4], held: [1, 2], heldElsewhere: [], pollers: 2)
        #expect(full == PollLeasePlan(), "at its share it waits: another instance takes the rest")
    }

    @Test("an instance above its share (another joined) gives back the excess, and every lease of a deleted source")
    func givesBackExcessAndDeletedSources() {
        let plan = PollLeasePlan.make(sources: [1, 2, 3, 4], held: [1, 2, 3, 4, 9], heldElsewhere: [], pollers: 2)
        #expect(plan == PollLeasePlan(take: [], release: [9, 3, 4]))
    }

    @Test("the shares cover every source: instances taking turns by the plan end up holding all of them, none twice")
    func sharesConverge() {
        let sources: [Int64] = Array(1...7)
        var held: [Set<Int64>] = [[], [], []]
        for _ in 0..<3 {
            for instance in held.indices {
                let others = held.indices.filter { $0 != instance }.reduce(into: Set<Int64>()) { $0.formUnion(held[$1]) }
                let plan = PollLeasePlan.make(sources: sources.shuffled(), held: held[instance], heldElsewhere: others, pollers: 3)
                held[instance].subtract(plan.release)
                held[instance].formUnion(plan.take)
            }
        }
        #expect(held.reduce(0) { $0 + $1.count } == 7)
        #expect(held.reduce(into: Set<Int64>()) { $0.formUnion($1) } == Set(sources))
        #expect(held.allSatisfy { $0.count <= 3 })
    }

    @Test("a lease key read back from pg_locks' halves (classid high, objid low) is the key taken")
    func keysRoundTripThroughPgLocks() {
        for key in [PollLeaseKeys.presence, PollLeaseKeys.source(appId: "app", name: "feed"), -1, Int64.min, 0, 42] {
            let bits = UInt64(bitPattern: key)
            #expect(PollLeaseKeys.key(classid: Int64(bits >> 32), objid: Int64(bits & 0xFFFF_FFFF)) == key)
        }
        #expect(PollLeaseKeys.source(appId: "app", name: "feed") == PollLeaseKeys.source(appId: "app", name: "feed"))
        #expect(PollLeaseKeys.source(appId: "app", name: "feed") != PollLeaseKeys.source(appId: "ap", name: "pfeed"))
    }
}
