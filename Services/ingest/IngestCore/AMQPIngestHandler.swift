import Foundation
import Logging
import NotifyAMQP
import NotifyModels

/// Consumes `notify.ingest`: the same JSON, validation and results as the HTTP publish endpoint.
///
/// The routing key names the app; RabbitMQ has already verified that the `user_id` property is the
/// connection's user, and this checks that user is the app's broker user. With `reply_to` set, the answer
/// (the HTTP body, with the HTTP status in the `x-notify-status` header) goes back with the `correlation_id`.
/// A message nothing of which can be accepted is dead-lettered with the reason.
struct AMQPIngestHandler: Sendable {
    let apps: AppDirectory
    let intake: NotificationIntake
    let sender: CommandSender
    let replies: AMQPPublisher
    let logger: Logger

    private struct Reply {
        var to: String
        var correlationId: String?
        var status: Int
        var body: Data
    }

    func handle(_ deliveries: [AMQPDelivery]) async -> [AMQPDisposition] {
        var dispositions = [AMQPDisposition](repeating: .ack, count: deliveries.count)
        var commands: [StorageCommand] = []
        var replies: [Reply] = []
        var accepted: [Int] = []
        let encoder = WireCoding.makeEncoder()
        for (index, delivery) in deliveries.enumerated() {
            let answer: (status: Int, body: Data)
            do {
                let outcome = try await accept(delivery)
                commands.append(contentsOf: outcome.commands)
                if outcome.acceptedCount > 0 {
                    accepted.append(index)
                } else {
                    dispositions[index] = .deadLetter(reason: "no notification accepted: \(outcome.results.compactMap(\.error?.message).joined(separator: "; "))")
                }
                answer = try Self.answer(outcome, encoder: encoder)
            } catch let failure as APIFailure {
                if failure.status == .serviceUnavailable {
                    dispositions[index] = .requeue
                    continue
                }
                dispositions[index] = .deadLetter(reason: "\(failure.body.error.code): \(failure.body.error.message)")
                answer = (Int(failure.status.code), (try? encoder.encode(failure.body)) ?? Data())
            } catch {
                dispositions[index] = .deadLetter(reason: "\(error)")
                continue
            }
            if let replyTo = delivery.properties.replyTo {
                replies.append(Reply(to: replyTo, correlationId: delivery.properties.correlationId, status: answer.status, body: answer.body))
            }
        }
        do {
            try await sender.send(commands)
        } catch {
            for index in accepted { dispositions[index] = .requeue }
            return dispositions
        }
        for reply in replies {
            do {
                try await self.replies.publish(AMQPOutboundMessage(
                    routingKey: reply.to, body: reply.body,
                    properties: AMQPProperties(correlationId: reply.correlationId, headers: ["x-notify-status": String(reply.status)], persistent: false)))
            } catch {
                logger.info("could not deliver a reply", metadata: ["replyTo": "\(reply.to)", "error": "\(error)"])
            }
        }
        return dispositions
    }

    private func accept(_ delivery: AMQPDelivery) async throws -> NotificationIntake.Outcome {
        let appId = delivery.routingKey
        let app: AppDirectory.App?
        do {
            app = try await apps.app(appId)
        } catch {
            throw APIFailure.databaseUnavailable
        }
        guard let app else {
            throw APIFailure(.notFound, code: "app_not_found", message: "no app with id \(appId) (the routing key names the app)", field: "routingKey")
        }
        guard let brokerUser = app.brokerUser, delivery.properties.userId == brokerUser else {
            throw APIFailure(.forbidden, code: "forbidden", message: "the message's user_id must be the app's broker user", field: "user_id")
        }
        let body = try PublishBody.decode(delivery.body)
        return intake.accept(body.items, isBatch: body.isBatch, appId: appId, idempotencyKey: delivery.properties.messageId)
    }

    private static func answer(_ outcome: NotificationIntake.Outcome, encoder: JSONEncoder) throws -> (status: Int, body: Data) {
        if outcome.results.count == 1, let id = outcome.results[0].id {
            return (202, Data(NotificationIntake.Outcome.acceptedJSON(id)))
        }
        if outcome.results.count == 1, let error = outcome.results[0].error {
            return (outcome.results[0].status, try encoder.encode(APIErrorBody(code: error.code, message: error.message, field: error.field)))
        }
        return (outcome.acceptedCount > 0 ? 202 : 400, Data(outcome.resultsJSON()))
    }
}
