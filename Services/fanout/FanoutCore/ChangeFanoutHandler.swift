import Foundation
import Logging
import NotifyAMQP
import NotifyModels
import NotifyWire
import NotifyRuntime
import ServiceLifecycle

/// Takes batches of change-event messages, resolves every user's devices in one query,
/// and publishes the push jobs per provider, many per message, and the batches themselves to the
/// live exchange, before the consumer acks. Batches overlap: one is read, resolved and built while the one
/// before it is published, but each publishes only after the one before it was settled, so a user's pushes
/// leave in the order of their changes.
struct ChangeFanoutHandler: Sendable {
    let resolver: SubscriptionResolver
    let broadcasts: BroadcastStreamer
    let publisher: AMQPPublisher
    let logger: Logger
    var jobsPerMessage = 500
    /// How long the alert of a new notification with raw and visual content waits after an iOS device's shoulder tap
    /// for the device to sync it (it is not sent if the device did); 0: the alert is sent at once, no tap.
    var visualFallbackDelay: TimeInterval = 0

    func handle(_ deliveries: [AMQPDelivery], order: AMQPBatchOrder) async -> [AMQPDisposition] {
        var dispositions = [AMQPDisposition](repeating: .ack, count: deliveries.count)
        var events: [ChangeEvent] = []
        var broadcastEvents: [ChangeEvent] = []
        var live: [AMQPOutboundMessage] = []
        var users = UserPositions()
        // The position in `users` of each event's user.
        var userPositions: [Int] = []
        for (index, delivery) in deliveries.enumerated() {
            do {
                for event in try ChangeEventBatch(delivery).events {
                    if event.eventSource == nil {
                        userPositions.append(users.position(of: UserKey(appId: event.appId, userId: event.userId), devicesVersion: event.devicesVersion))
                        events.append(event)
                    } else {
                        broadcastEvents.append(event)
                    }
                }
                // Edges holding live streams get the batch as it is (no re-encoding); none listening is fine.
                live.append(AMQPOutboundMessage(
                    exchange: QueueNames.liveExchange, routingKey: "", body: delivery.body,
                    properties: AMQPProperties(contentType: delivery.properties.contentType), mandatory: false))
            } catch {
                dispositions[index] = .deadLetter(reason: "not a change-event batch: \(error)")
            }
        }
        let done = await RetryUntilShutdown.succeeded("fan out", logger: logger) {
            let devices = try await resolver.devices(of: users.keys, atLeast: users.devicesVersions)
            var pushes = PushJobMessages(jobsPerMessage: jobsPerMessage, visualFallbackDelay: visualFallbackDelay)
            for (event, position) in zip(events, userPositions) {
                pushes.add(PushJobBuilder.jobs(for: event, devices: devices[position], visualFallback: visualFallbackDelay > 0))
            }
            await order.waitForPreviousBatch()
            try await publisher.publish(pushes.finish() + live)
            pushes.count()
            if logger.logLevel <= .debug {
                for event in events {
                    logger.debug("change fanned out", metadata: [
                        "notificationId": .id(event.notificationId), "appId": "\(event.appId)", "kind": "\(event.kind.rawValue)",
                        "sequence": "\(event.sequence)",
                    ])
                }
            }
            for event in broadcastEvents {
                try await broadcast(event)
            }
        }
        return done ? dispositions : RetryUntilShutdown.requeueing(dispositions)
    }

    /// Streams a broadcast's audience and publishes its jobs page by page (each page confirmed before the next).
    /// A redelivered broadcast starts over: the repeated pushes carry the same ids and collapse ids.
    private func broadcast(_ event: ChangeEvent) async throws {
        var pushed = 0
        try await broadcasts.forEachPage(appId: event.appId, eventSource: event.eventSource ?? "", joinedBy: event.changedAt) { page in
            var pushes = PushJobMessages(jobsPerMessage: jobsPerMessage)
            var jobs: [PushJob] = []
            // A badge the publish named wins (unless the app shows none); else each user's counted one, where the app counts.
            let named = page.omitsBadge ? nil : event.content?.push?.badge
            if page.badges.isEmpty || page.omitsBadge || named != nil {
                jobs = PushJobBuilder.jobs(for: event, devices: page.devices, broadcastBadge: named)
            } else {
                // Each user's own badge: the devices are grouped by it, so each payload is still built once per group.
                for (badge, devices) in Dictionary(grouping: zip(page.badges, page.devices), by: \.0) {
                    jobs += PushJobBuilder.jobs(for: event, devices: devices.map(\.1), broadcastBadge: badge)
                }
            }
            pushed += jobs.count
            pushes.add(jobs)
            try await publisher.publish(pushes.finish())
            pushes.count()
        }
        logger.info("broadcast fanned out", metadata: ["notificationId": .id(event.notificationId), "pushes": "\(pushed)"])
    }
}

/// The users of a batch of changes, each once, in order: rows of the device query name a user by position.
private struct UserPositions {
    private(set) var keys: [UserKey] = []
    /// Per user, the newest devices version among its changes; nil if one of them has none.
    private(set) var devicesVersions: [Int64?] = []
    private var positions: [UserKey: Int] = [:]

    mutating func position(of user: UserKey, devicesVersion: Int64?) -> Int {
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
