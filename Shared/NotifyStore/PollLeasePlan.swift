/// How the ingest instances share the poll sources: which leases one instance takes and gives back when it looks at
/// them again (every reload of the sources, 5 s).
///
/// The rule: `pollers` instances hold leases (each holds the shared presence lock, `PollLeaseKeys.presence`), and an
/// instance's share is ceil(sources / pollers). An instance gives back every lease of a source that no longer exists
/// and those beyond its share; below its share it tries the sources no session holds, in its own (shuffled) order,
/// until it reaches it. The shares add up to at least the number of sources, so every source finds a holder; an
/// instance that joins takes what the others gave back above their new share; one that dies (or loses its database
/// session) frees its leases and leaves the presence count, so the others' shares grow and they take its sources.
/// The count is not `IngestInstanceCount`'s (the consumers of `notify.ingest`): an instance that consumes but cannot
/// hold leases (its database session down) would be counted there, and the share it cannot take left unpolled.
public struct PollLeasePlan: Equatable, Sendable {
    /// Leases to try (`pg_try_advisory_lock`): another session may take one first.
    public var take: [Int64] = []
    public var release: [Int64] = []

    /// The most leases one of `pollers` instances holds while others want theirs.
    public static func share(sources: Int, pollers: Int) -> Int {
        pollers <= 1 ? sources : (sources + pollers - 1) / pollers
    }

    /// - Parameters:
    ///   - sources: every source's lease key, in the order this instance prefers them.
    ///   - held: the leases this instance holds.
    ///   - heldElsewhere: the leases other sessions hold.
    ///   - pollers: the instances holding the presence lock, this one included.
    public static func make(sources: [Int64], held: Set<Int64>, heldElsewhere: Set<Int64>, pollers: Int) -> PollLeasePlan {
        let share = share(sources: sources.count, pollers: pollers)
        let existing = Set(sources)
        var plan = PollLeasePlan()
        plan.release = held.filter { !existing.contains($0) }.sorted()
        let mine = sources.filter(held.contains)
        if mine.count > share {
            plan.release += mine.suffix(mine.count - share)
        } else {
            let free = sources.filter { !held.contains($0) && !heldElsewhere.contains($0) }
            plan.take = Array(free.prefix(share - mine.count))
        }
        return plan
    }
}
