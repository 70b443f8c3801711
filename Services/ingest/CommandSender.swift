import Foundation
import Logging
import NotifyAMQP
import NotifyModels

/// Puts storage commands on `storage.commands`, many to a message, and returns once the broker confirmed
/// them all: that confirm is what a 202 promises.
struct CommandSender: Sendable {
    let publisher: AMQPPublisher
    let logger: Logger

    /// Throws `APIFailure.brokerUnavailable` when the broker did not confirm.
    func send(_ commands: [StorageCommand]) async throws(APIFailure) {
        guard !commands.isEmpty else { return }
        let messages: [AMQPOutboundMessage]
        do {
            messages = try StorageCommandBatch.bodies(for: commands).map { AMQPOutboundMessage(routingKey: QueueNames.storageCommands, body: $0) }
        } catch {
            logger.error("could not encode a storage command", metadata: ["error": "\(error)"])
            throw APIFailure(.internalServerError, code: "internal_error", message: "could not encode the command")
        }
        do {
            try await publisher.publish(messages)
        } catch {
            logger.warning("storage commands not confirmed by the broker", metadata: ["error": "\(error)", "count": "\(commands.count)"])
            throw .brokerUnavailable
        }
    }
}
