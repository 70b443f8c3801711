import Foundation
import NotifyAMQP
import NotifyModels
import NotifyWire

/// Publishes change events to `notify.changes` (routed to `fanout.changes`, and to the live queues of edges holding
/// streams), many per message, and waits for the broker's confirm. Mandatory: a batch that reached no queue is an error.
struct ChangeEventEmitter: Sendable {
    let publisher: AMQPPublisher
    var fragmentsPerMessage = 500

    /// `fragments` are the outbox's wire fragments of `ChangeEvent`s (one per command); they are framed as
    /// `ChangeEventBatch` messages without decoding them again.
    func emit(_ fragments: [Data]) async throws {
        guard !fragments.isEmpty else { return }
        let messages = stride(from: 0, to: fragments.count, by: fragmentsPerMessage).map { start in
            AMQPOutboundMessage(
                exchange: QueueNames.changesExchange, routingKey: "",
                body: ChangeEventBatch.wireBytes(joining: fragments[start..<min(start + fragmentsPerMessage, fragments.count)]),
                properties: AMQPProperties(contentType: WireFormat.contentType))
        }
        try await publisher.publish(messages)
    }
}
