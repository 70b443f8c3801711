import Logging
import NotifyStore
import PostgresNIO

/// What PostgreSQL shows of its own state that tests look at: the session holding a poll lease, a standby's delay.
public struct ServerInspection: Sendable {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// The `application_name` of the session holding the lease of the app's poll source (`PollLeases` names its session
    /// after its process); nil while no session holds it.
    public func pollLeaseHolder(appId: String, source name: String) async throws -> String? {
        let lease = PollLeaseKeys.source(appId: appId, name: name)
        let rows = try await client.query(
            """
            SELECT l.classid::bigint, l.objid::bigint, a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE l.locktype = 'advisory' AND l.objsubid = 1 AND l.granted
            """, logger: logger)
        for try await (classid, objid, holder) in rows.decode((Int64, Int64, String).self)
        where PollLeaseKeys.key(classid: classid, objid: objid) == lease {
            return holder
        }
        return nil
    }

    /// A standby's `recovery_min_apply_delay`: how long after the primary's commit it applies a transaction.
    public func recoveryApplyDelay() async throws -> Duration {
        let rows = try await client.query("SELECT setting::int8 FROM pg_settings WHERE name = 'recovery_min_apply_delay'", logger: logger)
        for try await milliseconds in rows.decode(Int64.self) { return .milliseconds(milliseconds) }
        return .zero
    }
}
