import Foundation
import Logging
import NotifyAMQP
import NotifyModels
import NotifyWire
import NotifyRuntime
import ServiceLifecycle

/// Takes batches of change-event messages, resolves every user's devices in one query, and publishes the push jobs per
/// provider, many per message, before the consumer acks. (Edges holding live streams get the same batches from
/// storage's publish: their queues are bound to `notify.changes` too.) Batches overlap: one is read, resolved and built
/// while the one before it is published, but each publishes only after the one before it was settled, so a user's
/// pushes leave in the order of their changes.
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
        var users = UserPositions()
        // The position in `users` of each event's user.
        var userPositions: [Int] = []
        for (index, delivery) in deliveries.enumerated() {
            do {
                for event in try ChangeEventBatch(delivery).events {
                    if logger.logLevel <= .debug { logger.debug("change received", metadata: ["notificationId": .id(event.notificationId)]) }
                    if event.eventSource == nil {
                        userPositions.append(users.position(of: UserKey(appId: event.appId, userId: event.userId), devicesVersion: event.devicesVersion))
                        events.append(event)
                    } else {
                        broadcastEvents.append(event)
                    }
                }
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
            try await publisher.publish(pushes.finish())
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
        let recipientPush = event.recipientPush ?? [:]
        try await broadcasts.forEachPage(
            appId: event.appId, eventSource: event.eventSource ?? "", joinedBy: event.changedAt, withUsers: !recipientPush.isEmpty
        ) { page in
            var jobs: [PushJob]
            if recipientPush.isEmpty {
                jobs = Self.jobs(for: event, devices: page.devices, badges: page.badges, omitsBadge: page.omitsBadge)
            } else {
                // Members with push options of their own get the broadcast with theirs (each member's payloads built
                // once for the member's devices); the others share the broadcast's.
                var shared: [Int] = []
                var own: [String: [Int]] = [:]
                for (index, userId) in page.userIds.enumerated() {
                    if recipientPush[userId] != nil { own[userId, default: []].append(index) } else { shared.append(index) }
                }
                func memberJobs(for event: ChangeEvent, at indices: [Int]) -> [PushJob] {
                    Self.jobs(
                        for: event, devices: indices.map { page.devices[$0] }, badges: page.badges.isEmpty ? [] : indices.map { page.badges[$0] },
                        omitsBadge: page.omitsBadge)
                }
                jobs = memberJobs(for: event, at: shared)
                for (userId, indices) in own {
                    var memberEvent = event
                    memberEvent.content?.push = recipientPush[userId]
                    jobs += memberJobs(for: memberEvent, at: indices)
                }
            }
            pushed += jobs.count
            var pushes = PushJobMessages(jobsPerMessage: jobsPerMessage)
            pushes.add(jobs)
            try await publisher.publish(pushes.finish())
            pushes.count()
        }
        logger.info("broadcast fanned out", metadata: ["notificationId": .id(event.notificationId), "pushes": "\(pushed)"])
    }

    /// A broadcast's jobs for some of its members' devices, `badges` parallel to them where the app counts broadcasts:
    /// a badge the publish named wins (unless the app shows none), else each user's counted one.
    private static func jobs(for event: ChangeEvent, devices: [SubscriptionResolver.Device], badges: [Int], omitsBadge: Bool) -> [PushJob] {
        let named = omitsBadge ? nil : event.content?.push?.badge
        if badges.isEmpty || omitsBadge || named != nil {
            return PushJobBuilder.jobs(for: event, devices: devices, broadcastBadge: named)
        }
        // Each user's own badge: the devices are grouped by it, so each payload is still built once per group.
        var jobs: [PushJob] = []
        for (badge, devices) in Dictionary(grouping: zip(badges, devices), by: \.0) {
            jobs += PushJobBuilder.jobs(for: event, devices: devices.map(\.1), broadcastBadge: badge)
        }
        return jobs
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
