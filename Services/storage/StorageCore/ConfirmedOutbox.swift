import Foundation
import Logging
import NotifyDatabase
import NotifyRuntime
import NotifyStore
import ServiceLifecycle
import Synchronization

/// The commands whose change events the broker has confirmed, waiting to be cleared from the outbox
/// (`applied_commands.wire_events` set to NULL), so that a retried command (the same `message_id` published again)
/// is not pushed a second time. Until it is cleared, a retry emits the events again: at least once, never lost.
///
/// Clearing rides on the next batch's record statement (no round trip of its own while commands flow); when none comes
/// within `idleDelay`, this service clears them with a statement of its own.
final class ConfirmedOutbox: Service {
    private let applier: CommandBatchApplier
    private let logger: Logger
    private let idleDelay: Duration
    private let pending = Mutex<(ids: [UUID], since: ContinuousClock.Instant?)>(([], nil))
    /// Nudged when commands start to wait.
    private let waiting = Nudge()

    init(applier: CommandBatchApplier, logger: Logger, idleDelay: Duration = .milliseconds(200)) {
        self.applier = applier
        self.logger = logger
        self.idleDelay = idleDelay
    }

    /// Commands whose events the broker confirmed (or that were cleared in a transaction that then failed).
    func add(_ ids: [UUID]) {
        guard !ids.isEmpty else { return }
        let first = pending.withLock { pending in
            pending.ids += ids
            guard pending.since == nil else { return false }
            pending.since = .now
            return true
        }
        if first { waiting.nudge() }
    }

    /// Every command waiting; the caller clears them or adds them back.
    func take() -> [UUID] {
        pending.withLock { pending in
            defer { pending = ([], nil) }
            return pending.ids
        }
    }

    func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            // Asleep while nothing waits (an idle storage wakes for nothing), then until the oldest waits `idleDelay`.
            guard let since = pending.withLock({ $0.since }) else {
                await waiting.pause(upTo: .seconds(60))
                continue
            }
            let due = since + idleDelay
            if due > .now { await pauseUnlessShuttingDown(for: due - .now) }
            if pending.withLock({ $0.since.map { ContinuousClock.now - $0 >= idleDelay } ?? false }) { await clear(take()) }
        }
        await clear(take())
    }


    private func clear(_ ids: [UUID]) async {
        guard !ids.isEmpty else { return }
        do {
            try await applier.clearOutbox(ids)
        } catch {
            logger.debug("could not clear confirmed events from the outbox; will try again", metadata: ["error": "\(error)"])
            add(ids)
        }
    }
}
