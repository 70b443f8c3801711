import Foundation
import Logging
import NotifyAMQP
import NotifyModels
import NotifyRuntime
import ServiceLifecycle

/// Consumes `notify.ingest`: the same contract as the HTTP publish endpoint (`PublishContract`), with `message_id`
/// as the idempotency key.
///
/// The routing key names the app; RabbitMQ has already verified that the `user_id` property is the connection's
/// user, and this checks that user is one of the app's broker users. With `reply_to` set, the answer (the HTTP body,
/// with the HTTP status as the integer header `x-notify-status`) goes back with the `correlation_id`. A message
/// nothing of which can be accepted is dead-lettered to `notify.ingest.dead` with the reason (`x-notify-reason`) and
/// its sender (`x-notify-user-id`). An app over its rate limit is answered as HTTP answers it (429 `rate_limited`, with
/// the seconds to wait in the integer header `retry-after`) and its message dead-lettered with that reason, so that
/// the batch, and every other app's messages in it, go on at once.
///
/// A batch that meets a transient failure (the database or the broker not answering) is tried again in place, with
/// pauses from 0.1 s doubling to 5 s, until it goes through or the service shuts down (then it is requeued). Requeued
/// at once instead, its messages came straight back and failed again, and a quorum queue dead-letters a message after
/// 20 deliveries: in the chaos run, 48 confirmed publishes went that way while a RabbitMQ node was down.
struct AMQPIngestHandler: Sendable {
    let apps: AppDirectory
    let contract: PublishContract
    let sender: CommandSender
    let limiter: PublishRateLimiter
    let backlog: PipelineBacklog
    let replies: any MessagePublisher
    let logger: Logger

    /// The prefix of RabbitMQ's direct reply-to addresses: no queue, so a mandatory reply would come back unroutable
    /// although it was delivered.
    static let directReplyPrefix = "amq.rabbitmq.reply-to"

    private struct Reply {
        var to: String
        var correlationId: String?
        var status: Int
        var body: [UInt8]
        var retryAfterSeconds: Int?
    }

    func handle(_ deliveries: [AMQPDelivery]) async -> [AMQPDisposition] {
        var pause = Duration.milliseconds(100)
        while true {
            let (dispositions, transient) = await attempt(deliveries)
            guard let transient else { return dispositions }
            if Task.isShuttingDownGracefully || Task.isCancelled { return dispositions }
            logger.warning("could not take published messages; trying again", metadata: ["count": "\(deliveries.count)", "error": "\(transient)"])
            await pauseUnlessShuttingDown(for: pause)
            pause = min(pause * 2, .seconds(5))
        }
    }

    /// One try at the batch: its dispositions, and what transient failure (if any) left messages to requeue.
    private func attempt(_ deliveries: [AMQPDelivery]) async -> (dispositions: [AMQPDisposition], transient: String?) {
        var transient: String?
        var dispositions = [AMQPDisposition](repeating: .ack, count: deliveries.count)
        var commands: [StorageCommand] = []
        var replies: [Reply] = []
        var accepted: [Int] = []
        for (index, delivery) in deliveries.enumerated() {
            let answer: (status: Int, body: [UInt8], retryAfterSeconds: Int?)
            do {
                let result = try await accept(delivery)
                commands.append(contentsOf: result.commands)
                if result.acceptedNone {
                    dispositions[index] = .deadLetter(reason: "400 no notification accepted: \(String(decoding: result.body, as: UTF8.self))")
                } else {
                    accepted.append(index)
                    if logger.logLevel <= .debug {
                        for command in result.commands where command.notificationId != nil {
                            logger.debug("publish accepted over AMQP", metadata: command.logMetadata.merging([
                                "appId": "\(delivery.routingKey)", "messageId": "\(delivery.properties.messageId ?? "-")",
                            ]) { $1 })
                        }
                    }
                }
                answer = (result.status, result.body, nil)
            } catch {
                if error.status == .serviceUnavailable {
                    dispositions[index] = .requeue
                    transient = error.body.error.message
                    continue
                }
                dispositions[index] = .deadLetter(reason: "\(error.status.code) \(error.body.error.code): \(error.body.error.message)")
                answer = (Int(error.status.code), error.jsonBody, error.retryAfterSeconds)
            }
            if let replyTo = delivery.properties.replyTo {
                replies.append(Reply(
                    to: replyTo, correlationId: delivery.properties.correlationId, status: answer.status, body: answer.body,
                    retryAfterSeconds: answer.retryAfterSeconds))
            }
        }
        if transient != nil {
            // Tried again as a whole: nothing is sent or answered until every message of the batch could be taken.
            return (deliveries.map { _ in .requeue }, transient)
        }
        do {
            try await sender.send(commands)
        } catch {
            for index in accepted { dispositions[index] = .requeue }
            return (dispositions, "\(error)")
        }
        for reply in replies {
            var headers: [String: AMQPHeaderValue] = ["x-notify-status": .integer(Int64(reply.status))]
            if let seconds = reply.retryAfterSeconds { headers["retry-after"] = .integer(Int64(seconds)) }
            do {
                try await self.replies.publish([AMQPOutboundMessage(
                    routingKey: reply.to, body: Data(reply.body),
                    properties: AMQPProperties(correlationId: reply.correlationId, headers: headers, persistent: false),
                    mandatory: !reply.to.hasPrefix(Self.directReplyPrefix))])
            } catch {
                logger.info("could not deliver a reply", metadata: ["replyTo": "\(reply.to)", "error": "\(error)"])
            }
        }
        return (dispositions, nil)
    }

    private func accept(_ delivery: AMQPDelivery) async throws(APIFailure) -> PublishContract.Accepted {
        let appId = delivery.routingKey
        guard let sender = delivery.properties.userId else {
            throw APIFailure(.forbidden, code: "forbidden", message: "set user_id to your broker user (RabbitMQ checks it is the connection's user)", field: "user_id")
        }
        let app: AppDirectory.App?
        do {
            app = try await apps.app(appId, acceptingBrokerUser: sender)
        } catch {
            throw APIFailure.databaseUnavailable
        }
        guard let app else {
            throw APIFailure(.notFound, code: "app_not_found", message: "no app with id \(appId) (the routing key names the app)", field: "routingKey")
        }
        guard app.acceptsBrokerUser(sender) else {
            throw APIFailure(.forbidden, code: "forbidden", message: "user_id \(sender) is not a broker user of app \(appId)", field: "user_id")
        }
        let accepted = try await contract.accept(
            delivery.body, byteCount: delivery.body.count, appId: appId, idempotencyKey: delivery.properties.messageId, via: .amqp)
        // While the pipeline is backlogged, every app's messages wait here (the queue holds the rest): the broker is the
        // backpressure.
        while backlog.refusal() != nil {
            await pauseUnlessShuttingDown(for: .seconds(1))
            if Task.isShuttingDownGracefully { throw APIFailure.brokerUnavailable }
        }
        // One app over its limit is refused, as over HTTP: waiting here would hold every other app's messages too.
        if let wait = limiter.admit(appId: appId, limit: app.rateLimit, requests: 1, notifications: accepted.commands.count) {
            throw APIFailure.rateLimited(appId: appId, limit: limiter.limit(for: app.rateLimit), retryAfterSeconds: wait)
        }
        return accepted
    }
}
