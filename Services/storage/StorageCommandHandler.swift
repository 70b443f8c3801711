import Foundation
import Logging
import NotifyAMQP
import NotifyModels
import PostgresNIO
import ServiceLifecycle

/// Takes batches from `storage.commands`: decodes, applies in one transaction, emits the change events,
/// and only then lets the consumer ack.
///
/// A database or broker outage is waited out (with backoff) rather than acked or dropped; a command the
/// database refuses on its own (e.g. a constraint) is applied alone and dead-lettered with the reason,
/// so one poison command does not hold up the others.
struct StorageCommandHandler: Sendable {
    let applier: CommandBatchApplier
    let emitter: ChangeEventEmitter
    let logger: Logger

    func handle(_ deliveries: [AMQPDelivery]) async -> [AMQPDisposition] {
        var dispositions = [AMQPDisposition](repeating: .ack, count: deliveries.count)
        var commands: [StorageCommand] = []
        var positions: [Int] = []
        let decoder = WireCoding.makeDecoder()
        for (index, delivery) in deliveries.enumerated() {
            do {
                commands.append(try decoder.decode(StorageCommand.self, from: delivery.body))
                positions.append(index)
            } catch {
                dispositions[index] = .deadLetter(reason: "not a storage command: \(error)")
            }
        }
        guard !commands.isEmpty else { return dispositions }

        switch await applyWithRetry(commands) {
        case .applied:
            break
        case .shuttingDown:
            for index in positions { dispositions[index] = .requeue }
        case .refused:
            for (command, index) in zip(commands, positions) {
                switch await applyWithRetry([command]) {
                case .applied: break
                case .shuttingDown: dispositions[index] = .requeue
                case .refused(let reason): dispositions[index] = .deadLetter(reason: reason)
                }
            }
        }
        return dispositions
    }

    private enum Outcome {
        case applied
        case refused(String)
        case shuttingDown
    }

    private func applyWithRetry(_ commands: [StorageCommand]) async -> Outcome {
        var delay = Duration.milliseconds(100)
        while true {
            do {
                let events = try await applier.apply(commands)
                try await emitter.emit(events)
                return .applied
            } catch let error as PSQLError where error.code == .server && !Self.isTransient(error) {
                return .refused("database refused: \(error.serverInfo?[.message] ?? "\(error.code)")")
            } catch {
                logger.warning("could not apply commands; retrying", metadata: ["error": "\(String(reflecting: error))", "count": "\(commands.count)"])
            }
            if Task.isCancelled || Task.isShuttingDownGracefully { return .shuttingDown }
            try? await Task.sleep(for: delay)
            delay = min(delay * 2, .seconds(5))
        }
    }

    private static func isTransient(_ error: PSQLError) -> Bool {
        guard let state = error.serverInfo?[.sqlState] else { return true }
        // Serialization failures, deadlocks, and "insufficient resources" / "operator intervention" classes.
        return state == "40001" || state == "40P01" || state.hasPrefix("53") || state.hasPrefix("57") || state.hasPrefix("08")
    }
}
