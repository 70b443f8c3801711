import Foundation
import Logging
import NotifyAMQP
import NotifyModels
import NotifyRuntime
import NotifyWire
import Synchronization

/// Puts storage commands on `storage.commands` and returns once the broker confirmed them: that confirm is
/// what a 202 promises.
///
/// Group commit: while `publishesInFlight` publishes wait for their confirms, the commands sent meanwhile
/// wait too, and the next publish carries all of them in as few messages as fit. Under load many requests
/// then share a message and a confirm (what the broker and storage charge for, per message); a request
/// alone is published at once. Storage applies each command on its own, whichever message carried it.
///
/// With `pacing`, a publish first waits while storage is behind this instance's earlier publishes (`StoragePacing`),
/// and the commands that come meanwhile join it.
final class CommandSender: Sendable {
    /// What a waiting caller is woken for: its commands were sent (with this result), or it publishes next
    /// (`handedOver`: it waited for the publish before, so ingest is busy).
    private enum Turn {
        case sent(Result<Void, APIFailure>)
        case publish(handedOver: Bool)
    }

    private struct Waiting {
        var commands: [StorageCommand]
        var continuation: CheckedContinuation<Turn, Never>
    }

    private struct State {
        var waiting: [Waiting] = []
        var publishing = 0
    }

    private let publisher: any MessagePublisher
    private let pacing: StoragePacing?
    private let publishesInFlight: Int
    private let logger: Logger
    private let state = Mutex(State())

    init(publisher: some MessagePublisher, pacing: StoragePacing? = nil, publishesInFlight: Int = 1, logger: Logger) {
        self.publisher = publisher
        self.pacing = pacing
        self.publishesInFlight = max(publishesInFlight, 1)
        self.logger = logger
    }

    /// Requests waiting for a publish in flight to end, to go together in the next one.
    var requestsWaiting: Int { state.withLock { $0.waiting.count } }

    /// Throws `APIFailure.brokerUnavailable` when the broker did not confirm.
    func send(_ commands: [StorageCommand]) async throws(APIFailure) {
        guard !commands.isEmpty else { return }
        let turn = await withCheckedContinuation { (continuation: CheckedContinuation<Turn, Never>) in
            let publishesNow = state.withLock { state in
                guard state.publishing < publishesInFlight else {
                    state.waiting.append(Waiting(commands: commands, continuation: continuation))
                    return false
                }
                state.publishing += 1
                return true
            }
            if publishesNow { continuation.resume(returning: .publish(handedOver: false)) }
        }
        switch turn {
        case .sent(let result):
            try result.get()
        case .publish(let handedOver):
            await pacing?.waitForTurn()
            let group = state.withLock { state in
                defer { state.waiting = [] }
                return state.waiting
            }
            var all = group.isEmpty ? commands : commands + group.flatMap(\.commands)
            let announced = pacing?.markAnnouncement(in: &all, busy: handedOver || !group.isEmpty)
            let result = await publish(all)
            if let announced { pacing?.published(announced, confirmed: (try? result.get()) != nil) }
            for waiting in group { waiting.continuation.resume(returning: .sent(result)) }
            // The publish slot passes to the first caller that waited meanwhile, with its commands and the
            // ones that arrive before it takes them.
            let next = state.withLock { state in
                if state.waiting.isEmpty {
                    state.publishing -= 1
                    return nil as Waiting?
                }
                return state.waiting.removeFirst()
            }
            next?.continuation.resume(returning: .publish(handedOver: true))
            try result.get()
        }
    }

    private func publish(_ commands: [StorageCommand]) async -> Result<Void, APIFailure> {
        do {
            try await publisher.publish(StorageCommandBatch.messages(for: commands))
            if logger.logLevel <= .debug {
                for command in commands where command.notificationId != nil {
                    logger.debug("storage command confirmed by the broker", metadata: command.logMetadata)
                }
            }
            return .success(())
        } catch {
            logger.warning("storage commands not confirmed by the broker", metadata: ["error": "\(error)", "count": "\(commands.count)"])
            return .failure(.brokerUnavailable)
        }
    }
}
