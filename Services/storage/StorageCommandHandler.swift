import Foundation
import Logging
import NotifyAMQP
import NotifyModels
import NotifyRuntime
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
        do {
            let applied: Void? = try await RetryUntilShutdown.run("apply \(commands.count) commands", logger: logger, isPermanent: Self.isRefusal) {
                try await emitter.emit(try await applier.apply(commands))
            }
            return applied == nil ? .shuttingDown : .applied
        } catch let error as PSQLError {
            return .refused("database refused: \(error.serverInfo?[.message] ?? "\(error.code)")")
        } catch {
            return .refused("\(error)")
        }
    }

    /// The database refused the commands themselves (a constraint, bad data): retrying cannot help.
    private static func isRefusal(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError else { return false }
        return error.code == .server && !isTransient(error)
    }

    private static func isTransient(_ error: PSQLError) -> Bool {
        guard let state = error.serverInfo?[.sqlState] else { return true }
        // Serialization failures, deadlocks, and "insufficient resources" / "operator intervention" classes.
        return state == "40001" || state == "40P01" || state.hasPrefix("53") || state.hasPrefix("57") || state.hasPrefix("08")
    }
}
