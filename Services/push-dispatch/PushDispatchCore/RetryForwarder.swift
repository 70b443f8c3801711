import Foundation
import Logging
import NotifyAMQP
import NotifyRuntime
import NotifyWire
import ServiceLifecycle

/// Puts retries back on their provider's work queue when they are due. A retry waits in the retry queue of its delay
/// (`push.retry.<ms>ms`) with the time it is due and the queue it goes back to in its headers; this consumer holds
/// it (unacknowledged, up to the prefetch) until then, publishes it there (confirmed) and only then acks it. A crash
/// returns the held retries to their queue, where the next consumer finds the same due time.
///
/// It replaces the broker's TTL and dead-lettering, which lost retries in the chaos run: RabbitMQ 3.10's quorum
/// queues move expired messages through a dead-letter worker on the queue leader, and after a node failure the
/// worker of a newly elected leader could fail to start, leaving the expired retries in their delay queue until the
/// next leader change (rabbitmq-server pull request 7677 fixed this after 3.10.8, the version here).
///
/// Visual fallbacks (`QueueNames.pushVisualFallback`) and webhook events (`WebhookDispatcher.retryQueue`) wait the same
/// way (`DelayedForward`).
struct RetryForwarder: Sendable {
    static let dueHeader = DelayedForward.dueHeader
    static let targetHeader = DelayedForward.targetHeader

    let publisher: any MessagePublisher
    let logger: Logger
    /// Set: the messages this forwarder holds in several batches are forwarded in the order they are due, across batches
    /// (webhook events); nil: each batch forwards its own in order, whatever the others do (retries of pushes).
    var order: ForwardingOrder? = nil

    /// Takes the batch's messages in hand now (with an order: their places in it, before any later batch's, when the
    /// consumer calls this in the order it took the batches), and forwards each when due.
    func handle(_ deliveries: [AMQPDelivery]) async -> AMQPHandling {
        var dispositions = [AMQPDisposition](repeating: .requeue, count: deliveries.count)
        var waiting: [(index: Int, due: Int64, message: AMQPOutboundMessage)] = []
        for (index, delivery) in deliveries.enumerated() {
            guard let due = delivery.properties.headers[Self.dueHeader]?.integerValue,
                let target = delivery.properties.headers[Self.targetHeader]?.stringValue, !target.isEmpty
            else {
                dispositions[index] = .deadLetter(reason: "a retry without \(Self.dueHeader) and \(Self.targetHeader)")
                continue
            }
            var properties = delivery.properties
            properties.headers[Self.dueHeader] = nil
            properties.headers[Self.targetHeader] = nil
            waiting.append((index, due, AMQPOutboundMessage(routingKey: target, body: delivery.body, properties: properties)))
        }
        waiting.sort { $0.due < $1.due }
        let places = order?.hold(waiting.map(\.due)) ?? []
        return .settleAfter { [publisher, logger, order, dispositions, waiting] in
            var dispositions = dispositions
            defer { order?.release(places) }
            var next = waiting.startIndex
            while next < waiting.endIndex {
                let wait = waiting[next].due - Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
                if wait > 0 { await pauseUnlessShuttingDown(for: .milliseconds(wait)) }
                // Shutting down: what is not forwarded yet goes back to its queue (requeued) for another instance.
                if Task.isShuttingDownGracefully || Task.isCancelled { break }
                let now = Int64((Date().timeIntervalSince1970 * 1000).rounded(.up))
                var end = next
                while end < waiting.endIndex, waiting[end].due <= now { end += 1 }
                if let order {
                    // Only what no other batch holds a message due before.
                    end = next + order.forwardable(places[next..<end])
                    if end == next {
                        await pauseUnlessShuttingDown(for: .milliseconds(1))
                        continue
                    }
                }
                let due = waiting[next..<end]
                let forwarded = await RetryUntilShutdown.succeeded("put retries back on their work queue", logger: logger) {
                    try await publisher.publish(due.map(\.message))
                }
                guard forwarded else { break }
                for item in due { dispositions[item.index] = .ack }
                order?.release(places[next..<end])
                next = end
            }
            return dispositions
        }
    }
}
