import Foundation
import NotifyAMQP
import NotifyModels

extension WebhookDelivery: WireMessage {
    public func wireBytes() -> Data {
        var delivery = WireWebhookDelivery()
        delivery.schemaVersion = WireFormat.schemaVersion
        delivery.eventID = eventId.wireBytes
        delivery.appID = appId
        delivery.type = type
        delivery.dataJson = data
        delivery.createdAtMicros = createdAt.wireMicros
        return serialized(delivery)
    }

    public init(wireBytes: Data) throws(WireDecodingError) {
        let delivery = try readVersioned(WireWebhookDelivery.self, from: wireBytes, name: "WebhookDelivery") { $0.schemaVersion }
        self.init(
            eventId: try UUID(wire: delivery.eventID, "WebhookDelivery.event_id"), appId: delivery.appID, type: delivery.type,
            data: delivery.dataJson, createdAt: Date(wireMicros: delivery.createdAtMicros))
    }
}

extension WebhookOutcomeBatch: WireMessage {
    public func wireBytes() -> Data {
        var batch = WireWebhookOutcomeBatch()
        batch.schemaVersion = WireFormat.schemaVersion
        batch.outcomes = outcomes.map { outcome in
            var wire = WireWebhookOutcome()
            wire.eventID = outcome.eventId.wireBytes
            wire.appID = outcome.appId
            wire.type = outcome.type
            wire.attempt = Int32(clamping: outcome.attempt)
            if let status = outcome.status { wire.status = Int32(clamping: status) }
            wire.result = outcome.result
            if let reason = outcome.reason { wire.reason = reason }
            wire.atMicros = outcome.at.wireMicros
            return wire
        }
        return serialized(batch)
    }

    public init(wireBytes: Data) throws(WireDecodingError) {
        let batch = try readVersioned(WireWebhookOutcomeBatch.self, from: wireBytes, name: "WebhookOutcomeBatch") { $0.schemaVersion }
        var outcomes: [WebhookAttempt] = []
        for (index, wire) in batch.outcomes.enumerated() {
            outcomes.append(WebhookAttempt(
                eventId: try UUID(wire: wire.eventID, "WebhookOutcomeBatch.outcomes[\(index)].event_id"), appId: wire.appID, type: wire.type,
                attempt: Int(wire.attempt), status: wire.hasStatus ? Int(wire.status) : nil, result: wire.result,
                reason: wire.hasReason ? wire.reason : nil, at: Date(wireMicros: wire.atMicros)))
        }
        self.init(outcomes: outcomes)
    }
}

extension AMQPTopology {
    /// `webhooks.deliveries` and `webhooks.outcomes`, each with its dead-letter queue: storage relays to the first and
    /// reads the second, push-dispatch the other way round.
    public static let webhooks = AMQPTopology.workQueue(WebhookDelivery.queue).merging(.workQueue(WebhookOutcomeBatch.queue))
}
