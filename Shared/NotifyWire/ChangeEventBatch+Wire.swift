import Foundation
import NotifyAMQP
import NotifyModels

extension ChangeEventBatch: WireMessage {
    public func wireBytes() -> Data {
        var batch = WireChangeEventBatch()
        batch.schemaVersion = WireFormat.schemaVersion
        batch.events = events.map(\.wire)
        return serialized(batch)
    }

    public init(wireBytes: Data) throws(WireDecodingError) {
        let batch = try readVersioned(WireChangeEventBatch.self, from: wireBytes, name: "ChangeEventBatch") { $0.schemaVersion }
        var events: [ChangeEvent] = []
        events.reserveCapacity(batch.events.count)
        for (index, event) in batch.events.enumerated() { events.append(try ChangeEvent(wire: event, "ChangeEventBatch.events[\(index)]")) }
        self.init(events: events)
    }

    /// A message holding the events of `fragments` (each from `[ChangeEvent].wireFragment()`) in order, framed
    /// without decoding them: protobuf reads concatenated messages as one, their repeated fields appended.
    public static func wireBytes(joining fragments: some Sequence<Data>) -> Data {
        var header = WireChangeEventBatch()
        header.schemaVersion = WireFormat.schemaVersion
        var body = serialized(header)
        for fragment in fragments { body.append(fragment) }
        return body
    }
}

extension AMQPTopology {
    /// The exchange change events go through and fanout's work queue bound to it (storage publishes, fanout consumes).
    public static let changeEvents = AMQPTopology.workQueue(QueueNames.fanoutChanges).merging(AMQPTopology(
        exchanges: [.init(name: QueueNames.changesExchange, type: "fanout")],
        bindings: [.init(queue: QueueNames.fanoutChanges, exchange: QueueNames.changesExchange, routingKey: "")]))
}

extension Array where Element == ChangeEvent {
    /// The events as a part of a `ChangeEventBatch` message (its `events` field only), for an outbox that frames
    /// them into messages later with `ChangeEventBatch.wireBytes(joining:)`.
    public func wireFragment() -> Data {
        var batch = WireChangeEventBatch()
        batch.events = map(\.wire)
        return serialized(batch)
    }
}

extension ChangeEvent {
    var wire: WireChangeEvent {
        var event = WireChangeEvent()
        event.appID = appId
        event.userID = userId
        event.sequence = sequence
        event.kind = kind.wire
        event.notificationID = notificationId.wireBytes
        if let content { event.content = content.wire }
        event.readState = readState.wire
        event.userActionState = userActionState.wire
        if let originSubscriptionId { event.originSubscriptionID = originSubscriptionId.wireBytes }
        if let badge { event.unreadCount = Int64(badge) } else { event.badgeOmitted = true }
        event.changedAtMicros = changedAt.wireMicros
        if let eventSource { event.eventSource = eventSource }
        if let devicesVersion { event.devicesVersion = devicesVersion }
        if let pushSubscriptionIds { event.pushSubscriptionIds = pushSubscriptionIds.wireList }
        if let recipientPush { event.recipientPush = recipientPush.mapValues(\.wire) }
        if let memberFilter { event.memberFilter = memberFilter.wireStruct }
        return event
    }

    init(wire: WireChangeEvent, _ field: @autoclosure () -> String) throws(WireDecodingError) {
        self.init(
            appId: wire.appID, userId: wire.userID, sequence: wire.sequence, kind: try ChangeKind(wire: wire.kind, "\(field()).kind"),
            notificationId: try UUID(wire: wire.notificationID, "\(field()).notification_id"),
            content: wire.hasContent ? try NotificationContent(wire: wire.content, "\(field()).content") : nil,
            readState: try ReadState(wire: wire.readState, "\(field()).read_state"),
            userActionState: try UserActionState(wire: wire.userActionState, "\(field()).user_action_state"),
            originSubscriptionId: wire.hasOriginSubscriptionID ? try UUID(wire: wire.originSubscriptionID, "\(field()).origin_subscription_id") : nil,
            badge: wire.badgeOmitted ? nil : Int(wire.unreadCount), changedAt: Date(wireMicros: wire.changedAtMicros),
            eventSource: wire.hasEventSource ? wire.eventSource : nil, devicesVersion: wire.hasDevicesVersion ? wire.devicesVersion : nil,
            pushSubscriptionIds: wire.hasPushSubscriptionIds ? try [UUID](wire: wire.pushSubscriptionIds, "\(field()).push_subscription_ids") : nil,
            recipientPush: try [String: PushOptions](wire: wire.recipientPush, "\(field()).recipient_push"),
            memberFilter: wire.hasMemberFilter ? [String: JSONValue](wire: wire.memberFilter) : nil)
    }
}
