import Foundation
import NotifyModels

/// What a chaos run found: what was accepted and delivered, what was lost or duplicated, each user's changes feed,
/// every answer seen, and how long each fault took to recover from.
struct ChaosReport: Codable, Sendable {
    struct FaultOutcome: Codable, Sendable {
        let name: String
        let injectedAt: Double
        let recoveredAt: Double
        /// From the injection to the first notification published after it reaching every device of its user.
        let recoverySeconds: Double?
        /// For a database fault: from the injection until a new connection to the writer's URL reached a primary.
        let databaseWritableAfter: Double?
        let failure: String?
    }

    struct FeedCheck: Codable, Sendable {
        var users = 0
        var entries = 0
        /// Accepted notifications missing from their user's feed.
        var missing = 0
        /// A sequence seen twice, or a gap between two consecutive sequences.
        var repeatedSequences = 0
        var gaps = 0
        var unreadableUsers: [String] = []
    }

    var durationSeconds: Double
    var rate: Double
    var users: Int
    var devicesPerUser: Int
    var sent = 0
    var acceptedOverHTTP = 0
    var acceptedOverAMQP = 0
    /// Every answer seen, by HTTP status ("amqp confirm" for the broker's, "no answer" for none).
    var answers: [String: Int] = [:]
    /// 5xx answers other than 503, and 503s without Retry-After.
    var disallowedAnswers = 0
    var expectedPushes = 0
    var deliveredPushes = 0
    var lost = 0
    /// The first lost pushes, described (notification, publish, device), to look for in the logs.
    var lostPushes: [String] = []
    var duplicates = 0
    /// Pushes of publishes that got no 202 (the work was done, the answer was lost): allowed.
    var deliveredWithoutAcceptance = 0
    /// Pushes that reached a device after the push of a later change of the same user (a higher `notify.seq`):
    /// pushes keep no order (see the README's "Scaling out"); the client ignores a push its cache has passed.
    var overtakenPushes = 0
    var endToEndMs: LatencyStats?
    var feed = FeedCheck()
    var faults: [FaultOutcome] = []

    var passed: Bool {
        lost == 0 && disallowedAnswers == 0 && feed.missing == 0 && feed.repeatedSequences == 0 && feed.gaps == 0
            && feed.unreadableUsers.isEmpty && faults.allSatisfy { $0.failure == nil }
    }

    /// Analyses `publishes` against `pushes` (offsets from `startDate`), each user's feed and the faults.
    init(
        durationSeconds: Double, rate: Double, fixture: LoadFixture, bodies: NotificationBodies, startDate: Date,
        publishes: [ChaosPublish], pushes: [ObservedPush], feeds: [String: [ChaosFeedEntry]?], faultRecords: [ChaosFaultRecord]
    ) {
        self.durationSeconds = durationSeconds
        self.rate = rate
        users = fixture.users.count
        devicesPerUser = fixture.deviceTokens.first?.count ?? 0
        sent = publishes.count
        var idOfSeq: [UUID: ChaosPublish] = [:]
        for publish in publishes {
            idOfSeq[bodies.notificationId(ofSequence: publish.seq, appId: fixture.appId)] = publish
            let answer = publish.status.map { publish.transport == .amqp ? "amqp confirm" : String($0) } ?? "no answer (\(publish.transport.rawValue))"
            answers[answer, default: 0] += 1
            if publish.accepted { if publish.transport == .http { acceptedOverHTTP += 1 } else { acceptedOverAMQP += 1 } }
            if let status = publish.status, status >= 500, status != 503 || !publish.retryAfter { disallowedAnswers += 1 }
        }
        // The first arrival of each (notification, device) pair.
        struct Pair: Hashable { let id: UUID; let token: String }
        var firstArrival: [Pair: Date] = [:]
        for push in pushes {
            let pair = Pair(id: push.notificationId, token: push.deviceToken)
            if let seen = firstArrival[pair] { firstArrival[pair] = min(seen, push.receivedAt) } else { firstArrival[pair] = push.receivedAt }
        }
        duplicates = pushes.count - firstArrival.count
        var highestSequence: [String: Int64] = [:]
        for push in pushes.sorted(by: { $0.receivedAt < $1.receivedAt }) {
            guard let sequence = push.sequence else { continue }
            if let highest = highestSequence[push.deviceToken], highest > sequence { overtakenPushes += 1 }
            highestSequence[push.deviceToken] = max(highestSequence[push.deviceToken] ?? 0, sequence)
        }
        // When each accepted notification had reached all its devices (offset from the start), or nil.
        var completedAt: [(sentAt: Double, completedAt: Double)] = []
        var latencies: [Double] = []
        for (id, publish) in idOfSeq {
            let tokens = fixture.deviceTokens[bodies.userIndex(ofSequence: publish.seq)]
            let arrivals = tokens.map { firstArrival[Pair(id: id, token: $0)] }
            let delivered = arrivals.compactMap { $0 }
            if publish.accepted {
                expectedPushes += tokens.count
                deliveredPushes += delivered.count
                lost += tokens.count - delivered.count
                for (token, arrival) in zip(tokens, arrivals) where arrival == nil && lostPushes.count < 20 {
                    lostPushes.append(String(
                        format: "notification %@ (#%d over %@, sent at %.1f s) to device %@", id.uuidString.lowercased(), publish.seq,
                        publish.transport.rawValue, publish.sentAt, String(token.prefix(12))))
                }
                if delivered.count == tokens.count, let last = delivered.max() {
                    let offset = last.timeIntervalSince(startDate)
                    completedAt.append((publish.sentAt, offset))
                    latencies.append((offset - publish.sentAt) * 1000)
                }
            } else {
                deliveredWithoutAcceptance += delivered.count
            }
        }
        var histogram = LatencyStats.histogram()
        for milliseconds in latencies { _ = histogram.record(UInt64(Swift.max(milliseconds, 0) * 1000)) }
        endToEndMs = LatencyStats(histogram)
        completedAt.sort { $0.sentAt < $1.sentAt }
        faults = faultRecords.map { record in
            let recovery = completedAt.lazy.filter { $0.sentAt >= record.injectedAt }.map { $0.completedAt - record.injectedAt }.min()
            return FaultOutcome(
                name: record.name, injectedAt: record.injectedAt, recoveredAt: record.recoveredAt, recoverySeconds: recovery,
                databaseWritableAfter: record.databaseWritableAfter, failure: record.failure)
        }
        let acceptedIds = Set(idOfSeq.filter { $0.value.accepted }.keys)
        for (user, entries) in feeds {
            feed.users += 1
            guard let entries else {
                feed.unreadableUsers.append(user)
                continue
            }
            feed.entries += entries.count
            let ids = Set(entries.map(\.id))
            let userIndex = fixture.users.firstIndex(of: user) ?? -1
            feed.missing += acceptedIds.filter { id in idOfSeq[id].map { bodies.userIndex(ofSequence: $0.seq) == userIndex } ?? false }
                .subtracting(ids).count
            for (previous, next) in zip(entries, entries.dropFirst()) {
                if next.sequence <= previous.sequence { feed.repeatedSequences += 1 } else if next.sequence != previous.sequence + 1 { feed.gaps += 1 }
            }
            if let first = entries.first, first.sequence != 1 { feed.gaps += 1 }
        }
    }

    func markdown(command: String) -> String {
        func f(_ value: Double?) -> String { value.map { String(format: "%.1f", $0) } ?? "–" }
        var text = """
            ## Chaos run: \(passed ? "passed" : "FAILED")

            `\(command)`

            \(Int(durationSeconds)) s at \(f(rate)) notifications/s (HTTP and AMQP alternately), \(users) users × \(devicesPerUser) devices, \(faults.count) faults.

            | sent | accepted (HTTP 202 + AMQP confirm) | expected pushes | delivered | lost | duplicate pushes | pushes of unaccepted publishes | pushes overtaken by a later change's | 202 → last device p50 / p99 / max (ms) |
            |---|---|---|---|---|---|---|---|---|
            | \(sent) | \(acceptedOverHTTP + acceptedOverAMQP) (\(acceptedOverHTTP) + \(acceptedOverAMQP)) | \(expectedPushes) | \(deliveredPushes) | \(lost) | \(duplicates) | \(deliveredWithoutAcceptance) | \(overtakenPushes) | \(f(endToEndMs?.p50)) / \(f(endToEndMs?.p99)) / \(f(endToEndMs?.max)) |

            Changes feeds: \(feed.users) users, \(feed.entries) entries; accepted but missing \(feed.missing), a sequence repeated \(feed.repeatedSequences), \
            gaps \(feed.gaps)\(feed.unreadableUsers.isEmpty ? "" : ", unreadable for \(feed.unreadableUsers.count) users").

            Answers: \(answers.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")); not allowed (5xx other than 503 with Retry-After): \(disallowedAnswers).

            Accepting goes on through a database fault (the broker holds the commands); "database writable after" is when a new \
            connection to the writer's URL reached a primary again, "first end-to-end after it" when the first notification \
            published after the fault reached every device of its user.

            | # | fault | injected (s) | recovered (s) | database writable after (s) | first end-to-end after it (s) | failure |
            |---|---|---|---|---|---|---|

            """
        if !lostPushes.isEmpty {
            text = text.replacingOccurrences(of: "\n| # | fault", with: "\nLost: \(lostPushes.joined(separator: "; ")).\n\n| # | fault")
        }
        for (index, fault) in faults.enumerated() {
            text += "| \(index + 1) | \(fault.name) | \(f(fault.injectedAt)) | \(f(fault.recoveredAt)) | \(f(fault.databaseWritableAfter)) | "
                + "\(f(fault.recoverySeconds)) | \(fault.failure ?? "") |\n"
        }
        return text
    }
}

/// One entry of a user's changes feed, as the chaos check reads it.
struct ChaosFeedEntry: Codable, Sendable {
    let sequence: Int64
    let id: UUID
}
