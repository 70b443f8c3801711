import Logging
import NotifyDatabase
import NotifyRuntime
import PostgresNIO
import Synchronization

/// Wakes a storage loop when PostgreSQL announces work for it on a channel (NOTIFY at commit): `listen` keeps a
/// (reconnecting) LISTEN and nudges the loop at each announcement, and once when it begins listening, so what was
/// recorded before is handled at once. While it cannot listen, `isListening` is false and the loop looks on a short
/// timer instead.
final class AnnouncedWork: Sendable {
    private let nudge = Nudge()
    private let listening = Mutex(false)

    var isListening: Bool { listening.withLock { $0 } }

    /// Returns when work is announced, after `timeout`, or when graceful shutdown begins.
    func pause(upTo timeout: Duration) async {
        await nudge.pause(upTo: timeout)
    }

    /// Listens on `channel` until cancelled; `what` names the work in the log line of a lost listen.
    func listen(on channel: String, client: PostgresClient, what: String, logger: Logger) async {
        await client.listen(on: channel) {
            listening.withLock { $0 = true }
            nudge.nudge()
        } received: { _ in
            nudge.nudge()
        } stopped: { error in
            listening.withLock { $0 = false }
            if let error { logger.debug("not listening for \(what); looking on a timer meanwhile", metadata: ["error": "\(error)"]) }
        }
    }
}
