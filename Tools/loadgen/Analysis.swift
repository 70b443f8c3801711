import Foundation
import Histogram
import NotifyRuntime

/// Matches the observed pushes against what was published and computes the run's figures.
struct Analysis: Sendable {
    /// One matched push, for the latency-over-time graph.
    struct Point: Sendable {
        /// Seconds from the first 202 to this notification's 202.
        let acceptedOffset: Double
        let latencyMs: Double
    }

    var expectedPushes = 0
    var deliveredPushes = 0
    var lost = 0
    var duplicated = 0
    /// Pushes to our devices for ids we never saw a 202 for.
    var unexpected = 0
    /// Pushes for one of our notifications that reached a device of another user.
    var misrouted = 0
    /// Pushes that arrived before the 202 was read (latency counted as 0).
    var beforeAccepted = 0
    var firstAccepted: Date?
    var lastAccepted: Date?
    var lastPush: Date?
    var endToEnd = LatencyStats.histogram()
    /// Request -> answer of the requests answered 202.
    var publish = LatencyStats.histogram()
    /// Request -> answer of the requests refused (429, 503).
    var refusal = LatencyStats.histogram()
    var points: [Point] = []

    /// The figures of the notifications in `sequences` (all by default); pushes of the run's other notifications are
    /// left out, not counted as unexpected.
    init(outcome: Publisher.Outcome, fixture: LoadFixture, pushes: [ObservedPush], sequences: Range<Int>? = nil) {
        let sequences = sequences ?? 0..<outcome.ids.count
        let users = fixture.users.count
        let devices = fixture.deviceTokens.first?.count ?? 0
        var sequenceOfId: [UUID: Int] = [:]
        for (seq, id) in outcome.ids.enumerated() { if let id { sequenceOfId[id] = seq } }
        var owner: [String: (user: Int, device: Int)] = [:]
        for (user, tokens) in fixture.deviceTokens.enumerated() {
            for (device, token) in tokens.enumerated() { owner[token] = (user, device) }
        }
        let accepted = outcome.acceptedAt[sequences].compactMap { $0 }
        (firstAccepted, lastAccepted) = (accepted.min(), accepted.max())
        expectedPushes = accepted.count * devices
        for answer in outcome.answers where sequences.contains(answer.first) {
            if answer.status == 202 {
                publish.record(LatencyStats.microseconds(answer.elapsed))
            } else if AnswerCounts.isRefusal(answer.status) {
                refusal.record(LatencyStats.microseconds(answer.elapsed))
            }
        }

        // Pair index = seq * devices + device; counts how often each pair arrived.
        var arrivals = [UInt16](repeating: 0, count: outcome.ids.count * Swift.max(devices, 1))
        for push in pushes {
            guard let seq = sequenceOfId[push.notificationId], let acceptedAt = outcome.acceptedAt[seq] else {
                unexpected += 1
                continue
            }
            guard sequences.contains(seq) else { continue }
            guard let (user, device) = owner[push.deviceToken], user == seq % users else {
                misrouted += 1
                continue
            }
            let pair = seq * devices + device
            arrivals[pair] &+= 1
            if arrivals[pair] > 1 {
                duplicated += 1
                continue
            }
            deliveredPushes += 1
            lastPush = Swift.max(lastPush ?? push.receivedAt, push.receivedAt)
            var latency = push.receivedAt.timeIntervalSince(acceptedAt)
            if latency < 0 {
                beforeAccepted += 1
                latency = 0
            }
            endToEnd.record(LatencyStats.microseconds(.seconds(latency)))
            points.append(Point(acceptedOffset: acceptedAt.timeIntervalSince(firstAccepted ?? acceptedAt), latencyMs: latency * 1000))
        }
        lost = expectedPushes - deliveredPushes
    }

    /// Seconds from the first 202 to the last push, or nil without deliveries.
    var deliverySeconds: Double? {
        guard let firstAccepted, let lastPush else { return nil }
        return lastPush.timeIntervalSince(firstAccepted)
    }

    /// Seconds from the last 202 to the last push: how long delivery took to catch up once publishing stopped.
    var drainSeconds: Double? {
        guard let lastAccepted, let lastPush else { return nil }
        return Swift.max(lastPush.timeIntervalSince(lastAccepted), 0)
    }
}
