import Foundation
import Logging
import NotifyAMQP
import NotifyModels
import NotifyRuntime
import NotifyStore
import NotifyWire
import PostgresNIO
import ServiceLifecycle

/// Takes batches of messages from `storage.commands` (each message a `StorageCommandBatch`): decodes them,
/// applies their commands in transactions of at most `commandsPerTransaction`, emits the change events, and
/// only then lets the consumer ack.
///
/// A database or broker outage is waited out (with backoff) rather than acked or dropped; a command the
/// database refuses on its own (e.g. a constraint) is applied alone, so one poison command does not hold
/// up the others, and its message is dead-lettered with the reason. The other commands of that message
/// were applied; replaying it applies only what was not.
struct StorageCommandHandler: Sendable {
    let applier: CommandBatchApplier
    let emitter: ChangeEventEmitter
    let confirmed: ConfirmedOutbox
    let logger: Logger
    var commandsPerTransaction = 2000

    func handle(_ deliveries: [AMQPDelivery]) async -> [AMQPDisposition] {
        var dispositions = [AMQPDisposition](repeating: .ack, count: deliveries.count)
        var chunk: [(command: StorageCommand, delivery: Int)] = []
        for (index, delivery) in deliveries.enumerated() {
            let commands: [StorageCommand]
            do {
                commands = try StorageCommandBatch(delivery).commands
            } catch {
                dispositions[index] = .deadLetter(reason: "not a storage command batch: \(error)")
                continue
            }
            if logger.logLevel <= .debug {
                for command in commands where command.notificationId != nil { logger.debug("storage command received", metadata: command.logMetadata) }
            }
            if !chunk.isEmpty && chunk.count + commands.count > commandsPerTransaction {
                await apply(chunk, into: &dispositions)
                chunk = []
            }
            chunk += commands.map { ($0, index) }
        }
        if !chunk.isEmpty { await apply(chunk, into: &dispositions) }
        return dispositions
    }

    /// Applies the commands in one transaction; if the database refuses that, each alone.
    private func apply(_ commands: [(command: StorageCommand, delivery: Int)], into dispositions: inout [AMQPDisposition]) async {
        switch await applyWithRetry(commands.map(\.command)) {
        case .applied:
            break
        case .shuttingDown:
            for (_, delivery) in commands { dispositions[delivery] = .requeue }
        case .refused:
            for (command, delivery) in commands {
                switch await applyWithRetry([command]) {
                case .applied: break
                case .shuttingDown: dispositions[delivery] = .requeue
                case .refused(let reason):
                    dispositions[delivery] = .deadLetter(reason: "command \(command.commandId.lowercasedString): \(reason)")
                    logger.warning(
                        "storage command refused; its message is dead-lettered", metadata: command.logMetadata.merging(["reason": "\(reason)"]) { $1 })
                }
            }
        }
    }

    private enum Outcome {
        case applied
        case refused(String)
        case shuttingDown
    }

    private func applyWithRetry(_ commands: [StorageCommand]) async -> Outcome {
        do {
            let applied: Void? = try await RetryUntilShutdown.run("apply \(commands.count) commands", logger: logger, isPermanent: Self.isRefusal) {
                let clearing = confirmed.take()
                do {
                    let emitted = try await applier.apply(commands, clearing: clearing)
                    if logger.logLevel <= .debug {
                        for command in commands where command.notificationId != nil { logger.debug("storage command committed", metadata: command.logMetadata) }
                    }
                    try await emitter.emit(emitted.map(\.events))
                    confirmed.add(emitted.map(\.commandId))
                } catch {
                    confirmed.add(clearing)
                    throw error
                }
            }
            if applied != nil, logger.logLevel <= .debug {
                for command in commands where command.notificationId != nil {
                    logger.debug("storage command applied", metadata: command.logMetadata)
                }
            }
            return applied == nil ? .shuttingDown : .applied
        } catch {
            if let refusal = Self.serverError(error) {
                return .refused("database refused: \(refusal.serverInfo?[.message] ?? "\(refusal.code)")")
            }
            return .refused("\(error)")
        }
    }

    /// The database refused the commands themselves (a constraint, bad data): retrying cannot help.
    private static func isRefusal(_ error: any Error) -> Bool {
        guard let error = serverError(error) else { return false }
        return !isTransient(error)
    }

    /// The server's error, also from inside a transaction (PostgresNIO wraps those).
    private static func serverError(_ error: any Error) -> PSQLError? {
        if let transaction = error as? PostgresTransactionError {
            return (transaction.closureError ?? transaction.commitError).flatMap(serverError)
        }
        guard let error = error as? PSQLError, error.code == .server else { return nil }
        return error
    }

    private static func isTransient(_ error: PSQLError) -> Bool {
        isTransient(sqlState: error.serverInfo?[.sqlState])
    }

    /// Whether a server error of `sqlState` passes by itself: serialization failures and deadlocks, the "insufficient
    /// resources", "operator intervention" and connection classes, and a write refused as read-only (25006), which a
    /// connection meets on a primary demoted mid-failover before HAProxy closes it: the next connection reaches the
    /// new primary.
    static func isTransient(sqlState: String?) -> Bool {
        guard let state = sqlState else { return true }
        return state == "40001" || state == "40P01" || state == "25006" || state.hasPrefix("53") || state.hasPrefix("57") || state.hasPrefix("08")
    }
}
