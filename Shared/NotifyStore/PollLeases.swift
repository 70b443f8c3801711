import Foundation
import Logging
import NIOCore
import NotifyDatabase
import PostgresNIO
import Synchronization

/// This ingest instance's poll-source leases: so that one instance at a time polls a source, each instance polls only
/// the sources whose lease it holds, and another takes a lease over when its holder stops or dies.
///
/// A lease is a PostgreSQL session-level advisory lock (`pg_try_advisory_lock`, keys from `PollLeaseKeys`) held on one
/// connection of this instance's own, to the primary (`NOTIFY_DATABASE_URL`; a hot standby takes no advisory locks),
/// never a pooled one, whose session would keep them for whoever borrows it next. Advisory locks write nothing, so
/// ingest's read-only role may take them and storage stays the only writer; the server frees them when the session
/// ends, whether the instance stopped, crashed or lost the network (once the server notices), and nothing needs
/// expiring or renewing. A lease table would need writes (a role that writes, or storage taking leases through the
/// broker, with expiry and clock trouble) for the same effect.
///
/// When the session ends (the connection drops, or a query on it fails or takes longer than `timeout`, which closes it), every lease
/// is lost with it: `holds` answers false at once, polling stops, and `rebalance` connects again at the next reload
/// and takes leases anew. Which leases an instance takes: `PollLeasePlan`; the number of instances sharing them is read
/// from `pg_locks` (the sessions holding the shared presence lock), so an instance that cannot reach the database is
/// not counted and its share goes to the others.
public final class PollLeases: Sendable {
    private let configuration: PostgresConnection.Configuration
    private let logger: Logger
    /// The longest a query on the lease session may take; then the session is closed (its leases freed by the server).
    private let timeout: Duration

    private struct Session {
        var connection: PostgresConnection?
        var held: Set<Int64> = []
        var connections = 0
        /// When the session last answered a query.
        var answeredAt: ContinuousClock.Instant?
    }
    private let session = Mutex(Session())

    /// The lease session's query ran out of time, or no connection is open.
    private struct SessionLost: Error {}

    /// The session is named `notify-ingest poll leases, pid <this process's id>` (pg_stat_activity's application_name):
    /// joined with pg_locks, it shows which instance holds which lease.
    public init(configuration: PostgresConnection.Configuration, logger: Logger, timeout: Duration = .seconds(5)) {
        var configuration = configuration
        configuration.options.additionalStartupParameters.append(
            ("application_name", "notify-ingest poll leases, pid \(ProcessInfo.processInfo.processIdentifier)"))
        self.configuration = configuration
        self.logger = logger
        self.timeout = timeout
    }

    /// Whether this instance holds the lease of `key` (on a session not known to have ended).
    public func holds(_ key: Int64) -> Bool {
        session.withLock { $0.held.contains(key) }
    }

    /// Whether this instance holds the lease of `key` and its session still answers (it answered within the last
    /// second, or answers now): asked right before each poll, so a session the server ended without the connection
    /// noticing polls no more; many sources due at once cost one query a second, not one each.
    public func confirm(_ key: Int64) async -> Bool {
        guard holds(key) else { return false }
        if let answeredAt = session.withLock({ $0.answeredAt }), ContinuousClock.now - answeredAt < .seconds(1) { return true }
        do {
            try await onSession { connection in _ = try await connection.query("SELECT 1", logger: self.logger).collect() }
            return holds(key)
        } catch {
            return false
        }
    }

    /// Looks at the leases again: connects (and takes the presence lock) if no session is open, then takes and gives
    /// back leases of `sources` (every source's key) by `PollLeasePlan`. A failure ends the session.
    public func rebalance(_ sources: [Int64]) async {
        do {
            try await connectIfNeeded()
            try await onSession { connection in
                var others = Set<Int64>()
                var pollers = 0
                let rows = try await connection.query(
                    """
                    SELECT classid::bigint, objid::bigint, mode = 'ShareLock', pid = pg_backend_pid() FROM pg_locks
                    WHERE locktype = 'advisory' AND objsubid = 1 AND granted
                        AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                    """, logger: self.logger)
                for try await (classid, objid, shared, own) in rows.decode((Int64, Int64, Bool, Bool).self) {
                    let key = PollLeaseKeys.key(classid: classid, objid: objid)
                    if key == PollLeaseKeys.presence {
                        if shared { pollers += 1 }
                    } else if !own {
                        others.insert(key)
                    }
                }
                let held = self.session.withLock { $0.held }
                let plan = PollLeasePlan.make(sources: sources.shuffled(), held: held, heldElsewhere: others, pollers: pollers)
                if !plan.release.isEmpty {
                    self.session.withLock { $0.held.subtract(plan.release) }
                    _ = try await connection.query(
                        "SELECT pg_advisory_unlock(k) FROM unnest(\(ArrayParameter(plan.release))::bigint[]) AS k", logger: self.logger).collect()
                }
                if !plan.take.isEmpty {
                    var taken: [Int64] = []
                    let rows = try await connection.query(
                        "SELECT k FROM unnest(\(ArrayParameter(plan.take))::bigint[]) AS k WHERE pg_try_advisory_lock(k)", logger: self.logger)
                    for try await key in rows.decode(Int64.self) { taken.append(key) }
                    self.session.withLock { $0.held.formUnion(taken) }
                }
                if !plan.take.isEmpty || !plan.release.isEmpty {
                    self.logger.debug(
                        "poll leases looked at", metadata: ["held": "\(self.session.withLock { $0.held.count })", "pollers": "\(pollers)"])
                }
            }
        } catch {
            logger.debug("the poll leases cannot be looked at now", metadata: ["error": "\(String(reflecting: error))"])
        }
    }

    /// Ends the session, and with it every lease.
    public func close() async {
        let connection = session.withLock { session in
            session.held = []
            session.answeredAt = nil
            defer { session.connection = nil }
            return session.connection
        }
        try? await connection?.close()
    }

    private func connectIfNeeded() async throws {
        guard session.withLock({ $0.connection == nil }) else { return }
        let id = session.withLock { session in
            session.connections += 1
            return session.connections
        }
        let connection = try await PostgresConnection.connect(configuration: configuration, id: id, logger: logger)
        do {
            _ = try await connection.query("SELECT pg_advisory_lock_shared(\(PollLeaseKeys.presence))", logger: logger).collect()
        } catch {
            try? await connection.close()
            throw error
        }
        session.withLock { $0.connection = connection }
        logger.info("poll leases: session open; this instance takes its share of the poll sources")
        connection.closeFuture.whenComplete { [self] _ in
            let lost = session.withLock { session in
                guard session.connection === connection else { return false }
                session.connection = nil
                session.held = []
                session.answeredAt = nil
                return true
            }
            if lost { logger.warning("poll leases: the session ended; every lease is lost and polling stops until they are taken again") }
        }
    }

    /// Runs `body` on the open session within `timeout`. When it fails or runs out of time, the connection is closed
    /// (which fails a query under way, and ends the session and its leases): what the session holds is then known.
    private func onSession(_ body: @escaping @Sendable (PostgresConnection) async throws -> Void) async throws {
        guard let connection = session.withLock({ $0.connection }) else { throw SessionLost() }
        let timeout = timeout
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    try await body(connection)
                    self.session.withLock { $0.answeredAt = .now }
                }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    throw SessionLost()
                }
                defer { group.cancelAll() }
                try await group.next()
            }
        } catch {
            connection.close().whenComplete { _ in }
            throw error
        }
    }
}
