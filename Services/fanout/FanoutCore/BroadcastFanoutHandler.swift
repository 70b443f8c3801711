import Foundation
import Logging
import NotifyAMQP
import NotifyModels
import NotifyRuntime
import NotifyStore
import NotifyWire

/// The broadcast lane: takes broadcast changes from `fanout.broadcasts` (several at once, each in a batch of its own),
/// streams each audience page by page and publishes its push jobs to the providers' bulk queues (`push.<provider>.bulk`), each page confirmed
/// before the next. Before each page it lets a waiting interactive batch go first (`FanoutLanes`).
struct BroadcastFanoutHandler: Sendable {
    /// Each broadcast's audience, page by page.
    let audiences: any PushAudienceStore
    let publisher: any MessagePublisher
    let lanes: FanoutLanes
    let logger: Logger
    var jobsPerMessage = 500

    func handle(_ deliveries: [AMQPDelivery]) async -> [AMQPDisposition] {
        var dispositions = [AMQPDisposition](repeating: .ack, count: deliveries.count)
        for (index, delivery) in deliveries.enumerated() {
            let events: [ChangeEvent]
            do {
                events = try ChangeEventBatch(delivery).events
            } catch {
                dispositions[index] = .deadLetter(reason: "not a change-event batch: \(error)")
                continue
            }
            let done = await RetryUntilShutdown.succeeded("fan out a broadcast", logger: logger) {
                for event in events where event.eventSource != nil { try await broadcast(event) }
            }
            // Shutting down: this broadcast and those after it go back to the queue (the ones before are done).
            if !done { return Array(dispositions[..<index]) + RetryUntilShutdown.requeueing(Array(dispositions[index...])) }
        }
        return dispositions
    }

    /// Streams a broadcast's audience and publishes its jobs page by page (each page confirmed before the next).
    /// A redelivered broadcast starts over: the repeated pushes carry the same ids and collapse ids.
    private func broadcast(_ event: ChangeEvent) async throws {
        var pushed = 0
        let recipientPush = event.recipientPush ?? [:]
        try await audiences.forEachBroadcastPage(
            appId: event.appId, eventSource: event.eventSource ?? "", joinedBy: event.changedAt, memberFilter: event.memberFilter,
            withUsers: !recipientPush.isEmpty
        ) { page in
            await lanes.bulkTurn()
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
            var pushes = PushJobMessages(jobsPerMessage: jobsPerMessage, lane: .bulk)
            pushes.add(jobs)
            try await publisher.publish(pushes.finish())
            pushes.count()
        }
        logger.info("broadcast fanned out", metadata: ["notificationId": .id(event.notificationId), "pushes": "\(pushed)"])
    }

    /// A broadcast's jobs for some of its members' devices, `badges` parallel to them unless the app shows none: a badge
    /// the publish named wins (unless the app shows none), else each user's counted one.
    private static func jobs(for event: ChangeEvent, devices: [PushDevice], badges: [Int], omitsBadge: Bool) -> [PushJob] {
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

