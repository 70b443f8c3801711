import Foundation
import Metrics
import NotifyStore
import Synchronization

/// The devices fanout read per user, each set with the version of the user's devices it was read at
/// (`device_versions`, raised by every write to the user's subscriptions). A change event names the version
/// its user's devices had when it committed; devices read at that version or a later one are still the right
/// ones, so a user who gets many changes costs one read instead of one per batch.
///
/// Bounded: users are kept in two generations of at most `usersPerGeneration` each. When the current one is
/// full it becomes the previous one and the oldest is dropped; a user found in the previous one moves back.
final class DeviceCache: Sendable {
    /// A user's devices as read at `version`.
    struct Entry: Sendable {
        var version: Int64
        var devices: [PushDevice]
        /// The earliest `expiresAt` among the devices: until then none needs filtering out.
        var earliestExpiry: Date

        init(version: Int64, devices: [PushDevice]) {
            self.version = version
            self.devices = devices
            earliestExpiry = devices.lazy.map(\.expiresAt).min() ?? .distantFuture
        }

        /// The devices whose subscription has not expired by `now`.
        func devices(at now: Date) -> [PushDevice] {
            now < earliestExpiry ? devices : devices.filter { $0.expiresAt > now }
        }
    }

    private struct Generations {
        var current: [PushUser: Entry] = [:]
        var previous: [PushUser: Entry] = [:]
    }

    private let usersPerGeneration: Int
    private let generations = Mutex<Generations>(Generations())
    /// `notify_fanout_device_reads_total{source}`: users whose devices came from the cache or from the database.
    private let reads = (cache: Counter(label: "notify_fanout_device_reads_total", dimensions: [("source", "cache")]),
                         database: Counter(label: "notify_fanout_device_reads_total", dimensions: [("source", "database")]))

    /// - Parameter usersPerGeneration: 0 keeps nothing (every user's devices are read).
    init(usersPerGeneration: Int) {
        self.usersPerGeneration = usersPerGeneration
    }

    /// The current devices of each user whose entry is at least the version asked for; nil where it must be read.
    /// A nil version (an event from before versions existed) is never answered from the cache.
    func devices(of users: [PushUser], atLeast versions: [Int64?]) -> [[PushDevice]?] {
        guard usersPerGeneration > 0 else { return Array(repeating: nil, count: users.count) }
        let now = Date()
        let found: [[PushDevice]?] = generations.withLock { generations in
            zip(users, versions).map { user, version in
                guard let version else { return nil }
                if let entry = generations.current[user] {
                    return entry.version >= version ? entry.devices(at: now) : nil
                }
                guard let entry = generations.previous.removeValue(forKey: user) else { return nil }
                Self.insert(entry, for: user, into: &generations, limit: usersPerGeneration)
                return entry.version >= version ? entry.devices(at: now) : nil
            }
        }
        let hits = found.count { $0 != nil }
        if hits > 0 { reads.cache.increment(by: hits) }
        if hits < found.count { reads.database.increment(by: found.count - hits) }
        return found
    }

    /// Keeps what was read from the database (a later read replaces an earlier one only if it is not older).
    func store(_ entries: [(user: PushUser, entry: Entry)]) {
        guard usersPerGeneration > 0, !entries.isEmpty else { return }
        generations.withLock { generations in
            for (user, entry) in entries {
                if let kept = generations.current[user], kept.version > entry.version { continue }
                Self.insert(entry, for: user, into: &generations, limit: usersPerGeneration)
            }
        }
    }

    private static func insert(_ entry: Entry, for user: PushUser, into generations: inout Generations, limit: Int) {
        if generations.current.count >= limit && generations.current[user] == nil {
            generations.previous = generations.current
            generations.current = [:]
            generations.current.reserveCapacity(limit)
        }
        generations.current[user] = entry
    }
}
