import Foundation
import Metrics
import NotifyModels
import NotifyRuntime
import Synchronization

/// Paces ingest's publishes of commands by storage's progress, so that when requests come faster than storage
/// applies them they wait in ingest (and gather into fewer, larger messages) instead of accepted notifications waiting
/// in `storage.commands`: the time from a 202 to the push then stays close to a request's own.
///
/// While ingest is busy (a publish waited for the one before), each publish asks storage to announce one of its
/// commands once applied (`StorageCommand.announceWhenApplied`, heard by `AppliedCommandWatch`). When the oldest
/// announced publish storage has not applied yet was confirmed more than `allowedLag` ago, the next publish waits until
/// storage applies it. A publish alone asks for nothing, so a quiet stack pays nothing for this, and at a rate storage
/// keeps up with nothing waits.
///
/// Pacing never stops intake: a publish waits at most `maximumHold` after the one it waits for was confirmed. If
/// storage has not applied it by then (stopped, or far behind), pacing pauses until storage is heard applying one
/// of the later ones: the broker keeps what comes meanwhile, and `PipelineBacklog` decides when to refuse. While the
/// announcements cannot be heard, nothing waits.
final class StoragePacing: Sendable {
    private struct Announced {
        var commandId: UUID
        var confirmedAt: ContinuousClock.Instant
    }

    private struct State {
        /// This instance's announced publishes, oldest first, not yet known to be applied (the newest `kept`).
        var ahead: [Announced] = []
        /// Storage did not apply a publish within `maximumHold`: nothing waits until it is heard applying one.
        var paused = false
    }

    private let announcements: any AppliedAnnouncements
    /// How long after its confirm a publish may wait for storage before the next publish waits for it.
    let allowedLag: Duration
    let maximumHold: Duration
    private let state = Mutex(State())
    /// How long publishes waited for storage (only those that waited).
    private let waits = Metrics.Timer(label: "notify_ingest_pacing_wait_seconds", preferredDisplayUnit: .seconds)
    /// Announced publishes kept in view; older ones are forgotten (storage took them before the newer ones).
    private static let kept = 8

    init(announcements: some AppliedAnnouncements, allowedLag: Duration = .milliseconds(25), maximumHold: Duration = .seconds(1)) {
        self.announcements = announcements
        self.allowedLag = allowedLag
        self.maximumHold = maximumHold
    }

    /// Before a publish: waits while the oldest announced publish not yet applied is more than `allowedLag` old.
    func waitForTurn() async {
        let start = ContinuousClock.now
        defer {
            let waited = ContinuousClock.now - start
            if waited > .milliseconds(1) { waits.record(waited) }
        }
        while let oldest = nextToWaitFor() {
            let remaining = maximumHold - (ContinuousClock.now - oldest.confirmedAt)
            let applied: Bool?
            if remaining > .zero {
                applied = await announcements.waitUntilApplied(oldest.commandId, timeout: remaining)
            } else {
                announcements.forget(oldest.commandId)
                applied = false
            }
            state.withLock { state in
                state.ahead.removeAll { $0.commandId == oldest.commandId }
                switch applied {
                case true?: state.paused = false
                case false?: state.paused = true
                case nil: break
                }
            }
            guard applied == true else { return }
        }
    }

    /// Marks one command of a publish for announcement when ingest is busy (`busy`: this publish waited for the
    /// one before) or publishes are still ahead of storage; answers the marked command's id (nil: none marked).
    /// `commands` are published in this order, in messages of `StorageCommandBatch.maximumCommands`.
    func markAnnouncement(in commands: inout [StorageCommand], busy: Bool) -> UUID? {
        guard !commands.isEmpty, announcements.isListening else { return nil }
        guard busy || !state.withLock({ $0.ahead.isEmpty }) else { return nil }
        // A command of the last message (storage takes the messages in order): one whose sender does not already wait
        // for its announcement (that wait owns it).
        let lastMessage = (commands.count - 1) / StorageCommandBatch.maximumCommands * StorageCommandBatch.maximumCommands
        guard let index = commands[lastMessage...].firstIndex(where: { !$0.isAnnouncedWhenApplied }) else { return nil }
        commands[index].announceWhenApplied = true
        announcements.expect(commands[index].commandId)
        return commands[index].commandId
    }

    /// After a publish with an announcement: confirmed, it counts as ahead of storage until applied.
    func published(_ commandId: UUID, confirmed: Bool) {
        guard confirmed else {
            announcements.forget(commandId)
            return
        }
        let dropped = state.withLock { state -> [UUID] in
            state.ahead.append(Announced(commandId: commandId, confirmedAt: .now))
            let excess = max(state.ahead.count - Self.kept, 0)
            defer { state.ahead.removeFirst(excess) }
            return state.ahead.prefix(excess).map(\.commandId)
        }
        for commandId in dropped { announcements.forget(commandId) }
    }

    /// The publish to wait for, or nil when the next may go. Those storage applied are dropped first, and hearing it
    /// apply one ends a pause.
    private func nextToWaitFor() -> Announced? {
        state.withLock { state in
            // The newest that storage applied: it and every one before it (taken before it) hold no one up.
            if let newestApplied = state.ahead.lastIndex(where: { announcements.takeIfApplied($0.commandId) }) {
                for announced in state.ahead[..<newestApplied] { announcements.forget(announced.commandId) }
                state.ahead.removeFirst(newestApplied + 1)
                state.paused = false
            }
            guard !state.paused, let oldest = state.ahead.first, ContinuousClock.now - oldest.confirmedAt > allowedLag,
                announcements.isListening
            else { return nil }
            return oldest
        }
    }
}

/// Where `StoragePacing` hears that storage applied a command (`AppliedCommandWatch`; in tests, a stand-in).
protocol AppliedAnnouncements: Sendable {
    var isListening: Bool { get }
    func expect(_ commandId: UUID)
    func forget(_ commandId: UUID)
    /// Whether it was announced already; forgets it if so.
    func takeIfApplied(_ commandId: UUID) -> Bool
    /// True once announced, false after `timeout`, nil when not listening; forgets it either way.
    func waitUntilApplied(_ commandId: UUID, timeout: Duration) async -> Bool?
}

extension AppliedCommandWatch: AppliedAnnouncements {}
