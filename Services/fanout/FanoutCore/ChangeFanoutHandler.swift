import Foundation
import Logging
import NotifyAMQP
import NotifyModels
import NotifyRuntime
import NotifyStore
import NotifyWire
import ServiceLifecycle

/// Takes batches of change-event messages, resolves every user's devices in one query, and publishes the push jobs per
/// provider, many per message, before the consumer acks. (Edges holding live streams get the same batches from
/// storage's publish: their queues are bound to `notify.changes` too.) Batches overlap: one is read, resolved and built
/// while the one before it is published, but each publishes only after the one before it was settled, so a user's
/// pushes leave in the order of their changes. Broadcast changes are moved, in the same confirmed publish, to
/// `fanout.broadcasts` (`BroadcastFanoutHandler` streams their audiences): a one-to-one change never waits for one.
struct ChangeFanoutHandler: Sendable {
    let resolver: SubscriptionResolver
    let publisher: any MessagePublisher
    /// Tells the broadcast lane when this lane has a batch in hand (it then waits before its next page).
    let lanes: FanoutLanes
    let logger: Logger
    var jobsPerMessage = 500
    /// How long the alert of a new notification with raw and visual content waits after an iOS device's shoulder tap
    /// for the device to sync it (it is not sent if the device did); 0: the alert is sent at once, no tap.
    var visualFallbackDelay: TimeInterval = 0

    func handle(_ deliveries: [AMQPDelivery], order: AMQPBatchOrder) async -> [AMQPDisposition] {
        var dispositions = [AMQPDisposition](repeating: .ack, count: deliveries.count)
        var events: [ChangeEvent] = []
        var broadcastEvents: [ChangeEvent] = []
        var users = UserPositions()
        // The position in `users` of each event's user.
        var userPositions: [Int] = []
        for (index, delivery) in deliveries.enumerated() {
            do {
                for event in try ChangeEventBatch(delivery).events {
                    if logger.logLevel <= .debug { logger.debug("change received", metadata: ["notificationId": .id(event.notificationId)]) }
                    if event.eventSource == nil {
                        userPositions.append(users.position(of: PushUser(appId: event.appId, userId: event.userId), devicesVersion: event.devicesVersion))
                        events.append(event)
                    } else {
                        broadcastEvents.append(event)
                    }
                }
            } catch {
                dispositions[index] = .deadLetter(reason: "not a change-event batch: \(error)")
            }
        }
        let busy = lanes.interactiveBatchStarted()
        defer { busy.end() }
        let done = await RetryUntilShutdown.succeeded("fan out", logger: logger) {
            let devices = try await resolver.devices(of: users.keys, atLeast: users.devicesVersions)
            var pushes = PushJobMessages(jobsPerMessage: jobsPerMessage, visualFallbackDelay: visualFallbackDelay)
            for (event, position) in zip(events, userPositions) {
                pushes.add(PushJobBuilder.jobs(for: event, devices: devices[position], visualFallback: visualFallbackDelay > 0))
            }
            var messages = pushes.finish()
            if !broadcastEvents.isEmpty {
                messages.append(AMQPOutboundMessage(routingKey: QueueNames.fanoutBroadcasts, wire: ChangeEventBatch(events: broadcastEvents)))
            }
            await order.waitForPreviousBatch()
            try await publisher.publish(messages)
            pushes.count()
            if logger.logLevel <= .debug {
                for event in events {
                    logger.debug("change fanned out", metadata: [
                        "notificationId": .id(event.notificationId), "appId": "\(event.appId)", "kind": "\(event.kind.rawValue)",
                        "sequence": "\(event.sequence)",
                    ])
                }
            }
        }
        return done ? dispositions : RetryUntilShutdown.requeueing(dispositions)
    }
}

/// The users of a batch of changes, each once, in order: rows of the device query name a user by position.
private struct UserPositions {
    private(set) var keys: [PushUser] = []
    /// Per user, the newest devices version among its changes; nil if one of them has none.
    private(set) var devicesVersions: [Int64?] = []
    private var positions: [PushUser: Int] = [:]

    mutating func position(of user: PushUser, devicesVersion: Int64?) -> Int {
        if let position = positions[user] {
            devicesVersions[position] = devicesVersions[position].flatMap { known in devicesVersion.map { max(known, $0) } }
            return position
        }
        keys.append(user)
        devicesVersions.append(devicesVersion)
        positions[user] = keys.count - 1
        return keys.count - 1
    }
}
