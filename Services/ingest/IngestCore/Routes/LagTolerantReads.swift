import Logging
import Metrics
import NotifyStore
import Synchronization

/// Where the reads that tolerate replication lag go: the changes feed and history, to a hot standby when ingest has one
/// (`NOTIFY_REPLICA_DATABASE_URL`), else to the primary. Everything that must see a write just made (operator calls,
/// registrations, state changes answering what is stored), authentication and the live stream (woken by a change the
/// primary committed) read the primary.
///
/// Why lag cannot make a cursor skip: a user's changes are numbered through a counter row locked until commit
/// (`ChangeSequencing`), and a transaction writes its commit record to the WAL before it releases its locks, so the
/// commit of a user's change N+1 follows that of N in the WAL (an app's broadcast numbers likewise). A standby replays
/// the WAL in order and makes a transaction visible when it replays its commit, so every snapshot it takes holds a
/// prefix of each user's changes, as the primary's do, only a shorter one. A cursor moves only to what a page listed:
/// a lagging standby answers fewer changes, never a gap, and the same cursor later answers the rest.
///
/// A read the standby fails (down, not reached within `replicaTimeout`, its query cancelled by replay) is made again on
/// the primary and logged; the standby is then left alone for `pauseAfterFailure`, so that one that is down costs a
/// timeout now and then, not one per request.
final class LagTolerantReads: Sendable {
    let primary: any NotificationStore
    let replica: (any NotificationStore)?
    let logger: Logger
    let replicaTimeout: Duration
    let pauseAfterFailure: Duration
    /// Until when the standby is left alone after a failure.
    private let replicaPausedUntil = Mutex<ContinuousClock.Instant?>(nil)

    private static let fallbacks = Counter(label: "notify_replica_fallbacks_total")

    init(
        primary: any NotificationStore, replica: (any NotificationStore)?, logger: Logger,
        replicaTimeout: Duration = .seconds(1), pauseAfterFailure: Duration = .seconds(5)
    ) {
        self.primary = primary
        self.replica = replica
        self.logger = logger
        self.replicaTimeout = replicaTimeout
        self.pauseAfterFailure = pauseAfterFailure
    }

    /// Runs `read` against the standby if there is one and it is not paused, else (or when it fails there) against the
    /// primary. What the standby answers, a `NotifyStoreError` or an `APIFailure` included, is the answer.
    func read<Value: Sendable>(_ what: String, _ read: @escaping @Sendable (any NotificationStore) async throws -> Value) async throws -> Value {
        guard let replica, replicaAvailable() else { return try await read(primary) }
        do {
            return try await withReplicaTimeout { try await read(replica) }
        } catch let answer as NotifyStoreError {
            throw answer
        } catch let answer as APIFailure {
            throw answer
        } catch where Task.isCancelled {
            // The request was given up (its client went away): not the standby's failure.
            throw error
        } catch {
            replicaPausedUntil.withLock { $0 = .now + pauseAfterFailure }
            Self.fallbacks.increment()
            logger.warning(
                "the standby failed a read; reading the primary, and not the standby for a while",
                metadata: ["read": "\(what)", "error": "\(String(reflecting: error))", "pause": "\(pauseAfterFailure)"])
            return try await read(primary)
        }
    }

    private func replicaAvailable() -> Bool {
        replicaPausedUntil.withLock { until in
            guard let pausedUntil = until else { return true }
            guard ContinuousClock.now >= pausedUntil else { return false }
            until = nil
            return true
        }
    }

    /// The standby did not answer within `replicaTimeout` (e.g. it is down: the pool then keeps a request waiting
    /// while it tries to connect).
    private struct ReplicaTimeout: Error {}

    private func withReplicaTimeout<Value: Sendable>(_ read: @escaping @Sendable () async throws -> Value) async throws -> Value {
        let timeout = replicaTimeout
        return try await withThrowingTaskGroup(of: Value.self) { group in
            group.addTask { try await read() }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw ReplicaTimeout()
            }
            defer { group.cancelAll() }
            guard let value = try await group.next() else { throw ReplicaTimeout() }
            return value
        }
    }
}
