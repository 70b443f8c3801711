import Foundation
import NotifyAMQP
import NotifyModels

/// Publishes change events to `fanout.changes`, many per message, and waits for the broker's confirm.
struct ChangeEventEmitter: Sendable {
    let publisher: AMQPPublisher
    var eventsPerMessage = 500

    /// `events` are JSON objects of `ChangeEvent`; they are framed as `ChangeEventBatch` messages
    /// without decoding them again.
    func emit(_ events: [String]) async throws {
        guard !events.isEmpty else { return }
        var messages: [AMQPOutboundMessage] = []
        var start = 0
        while start < events.count {
            let end = min(start + eventsPerMessage, events.count)
            var body = Data("{\"events\":[".utf8)
            for index in start..<end {
                if index > start { body.append(UInt8(ascii: ",")) }
                body.append(contentsOf: events[index].utf8)
            }
            body.append(contentsOf: "]}".utf8)
            messages.append(AMQPOutboundMessage(routingKey: QueueNames.fanoutChanges, body: body))
            start = end
        }
        try await publisher.publish(messages)
    }
}
