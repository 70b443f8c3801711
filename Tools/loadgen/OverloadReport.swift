import Foundation
import NotifyRuntime

/// What `loadgen overload` measured in each phase, and whether ingest kept serving within the app's limit, refused the
/// rest as it should, lost nothing it accepted and recovered once the load dropped.
struct OverloadReport: Codable, Sendable {
    struct Phase: Codable, Sendable {
        let name: String
        /// The rate the phase offers, and for how long.
        let plannedRate: Double
        let plannedSeconds: Double
        let offered: Int
        /// From the first request of the phase going out to its last answer.
        let seconds: Double
        /// From the first request of the phase going out to its last refusal (429, 503); nil without one.
        let lastRefusalSeconds: Double?
        let answers: AnswerCounts
        let expectedPushes: Int
        let deliveredPushes: Int
        let lost: Int
        let duplicated: Int
        let acceptedLatencyMs: LatencyStats
        let refusedLatencyMs: LatencyStats
        let endToEndLatencyMs: LatencyStats
        let cpu: ProcessCPU.Usage

        var offeredPerSecond: Double { Double(offered) / Swift.max(seconds, 0.001) }
        var acceptedPerSecond: Double { Double(answers.accepted) / Swift.max(seconds, 0.001) }

        init(
            name: String, plannedRate: Double, outcome: Publisher.Outcome, answers: AnswerCounts, analysis: Analysis, cpu: ProcessCPU.Usage,
            sequences: Range<Int>
        ) {
            self.name = name
            self.plannedRate = plannedRate
            plannedSeconds = Double(sequences.count) / plannedRate
            let requests = outcome.answers.filter { sequences.contains($0.first) }
            offered = requests.reduce(0) { $0 + $1.count }
            let start = requests.map { $0.answeredAt.addingTimeInterval(-$0.elapsed.inSeconds) }.min()
            seconds = start.flatMap { start in requests.map(\.answeredAt).max().map { $0.timeIntervalSince(start) } } ?? 0
            lastRefusalSeconds = start.flatMap { start in
                requests.filter { AnswerCounts.isRefusal($0.status) }.map(\.answeredAt).max().map { $0.timeIntervalSince(start) }
            }
            self.answers = answers
            expectedPushes = analysis.expectedPushes
            deliveredPushes = analysis.deliveredPushes
            lost = analysis.lost
            duplicated = analysis.duplicated
            acceptedLatencyMs = LatencyStats(analysis.publish)
            refusedLatencyMs = LatencyStats(analysis.refusal)
            endToEndLatencyMs = LatencyStats(analysis.endToEnd)
            self.cpu = cpu
        }
    }

    let startedAt: Date
    let appId: String
    /// The app's limit, in notifications and in requests per second.
    let limit: Int
    let users: Int
    let devicesPerUser: Int
    let concurrency: Int
    let drainTimedOut: Bool
    let phases: [Phase]

    /// Accepted in the overload phase, and the most the limit allows there: its rate over the phase plus the one
    /// second's worth the token bucket starts with.
    var overloadAccepted: Int { phases.first?.answers.accepted ?? 0 }
    var allowedInOverload: Double { Double(limit) * ((phases.first?.plannedSeconds ?? 0) + 1) }
    /// The overload phase accepted between 90 % and 105 % of what the limit allows.
    var withinLimit: Bool {
        Double(overloadAccepted) >= 0.9 * Double(limit) * (phases.first?.plannedSeconds ?? 0)
            && Double(overloadAccepted) <= 1.05 * allowedInOverload
    }
    var nothingLost: Bool { phases.allSatisfy { $0.lost == 0 } }
    var refusalsSaidWhenToRetry: Bool { phases.allSatisfy { $0.answers.refusedWithoutRetryAfter == 0 } }
    /// Everything offered after the overload was accepted, but in the first `recoverySeconds` of the next phase (the
    /// overload leaves the bucket empty, and it refills at the limit's rate).
    var recovered: Bool {
        phases.dropFirst().allSatisfy { $0.answers.failed == 0 && ($0.lastRefusalSeconds ?? 0) <= Self.recoverySeconds }
    }
    static let recoverySeconds = 1.0
    var passed: Bool { withinLimit && nothingLost && refusalsSaidWhenToRetry && recovered }

    var title: String {
        "loadgen overload: limit \(limit)/s, " + phases.map { "\($0.name) \(Int($0.plannedRate))/s" }.joined(separator: ", ")
    }

    var markdown: String {
        func n(_ value: Double) -> String { NumberText.grouped(value) }
        func g(_ value: Int) -> String { NumberText.grouped(value) }
        func ms(_ stats: LatencyStats) -> String { stats.count == 0 ? "—" : String(format: "%.1f / %.1f", stats.p50, stats.p99) }
        let rows: [(String, (Phase) -> String)] = [
            ("offered (planned rate)", { "\(g($0.offered)) in \(String(format: "%.1f", $0.seconds)) s: \(n($0.offeredPerSecond))/s (\(n($0.plannedRate))/s)" }),
            ("accepted (202)", { "\(g($0.answers.accepted)): \(n($0.acceptedPerSecond))/s" }),
            ("refused 429 / 503", { "\(g($0.answers.rateLimited)) / \(g($0.answers.unavailable))" }),
            ("last refusal after the phase began", { $0.lastRefusalSeconds.map { String(format: "%.2f s", $0) } ?? "—" }),
            ("other answers", { $0.answers.failed == 0 ? "0" : $0.answers.other.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ") }),
            ("pushes expected / delivered", { "\(g($0.expectedPushes)) / \(g($0.deliveredPushes))" }),
            ("**lost** (accepted, not delivered)", { "**\($0.lost)**" }),
            ("duplicated pushes", { "\($0.duplicated)" }),
            ("request latency, 202, p50 / p99 (ms)", { ms($0.acceptedLatencyMs) }),
            ("request latency, refused, p50 / p99 (ms)", { ms($0.refusedLatencyMs) }),
            ("202 → push p50 / p99 (ms)", { ms($0.endToEndLatencyMs) }),
            ("CPU per request offered, all processes", { String(format: "%.0f µs (%.2f cores)", $0.cpu.totalMicrosecondsPerUnit, $0.cpu.coresBusy) }),
        ]
        var lines = [
            "# \(title) — \(startedAt.formatted(.iso8601))", "",
            "App \(appId), \(users) users × \(devicesPerUser) devices, single-notification requests, at most \(concurrency) in flight; "
                + "limit \(limit) notifications/s and \(limit) requests/s (PATCH /v1/apps/{appId}).", "",
            "| | " + phases.map(\.name).joined(separator: " | ") + " |",
            "|---|" + phases.map { _ in "---|" }.joined(),
        ]
        for (name, value) in rows { lines.append("| \(name) | " + phases.map(value).joined(separator: " | ") + " |") }
        lines += [
            "",
            "- Kept serving within the limit: \(withinLimit ? "yes" : "no") (\(g(overloadAccepted)) accepted in the overload phase; "
                + "the limit allows \(n(allowedInOverload)), its rate over the phase plus the bucket's first second)",
            "- Every refusal said when to retry (Retry-After): \(refusalsSaidWhenToRetry ? "yes" : "no")",
            "- Recovered when the load dropped (everything accepted after the first \(n(Self.recoverySeconds)) s, while the bucket "
                + "refills): \(recovered ? "yes" : "no")",
            "- Nothing accepted was lost: \(nothingLost ? "yes" : "no")\(drainTimedOut ? " (the drain timed out)" : "")",
            "- **\(passed ? "passed" : "failed")**",
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    /// Answers (by when each came) and first pushes per second, with the overload phase shaded, as the chaos run draws them.
    static func timeline(outcome: Publisher.Outcome, pushes: [ObservedPush], overloadSeconds: Double, title: String) -> String {
        var publishes: [ChaosPublish] = []
        for answer in outcome.answers {
            let at = answer.answeredAt.timeIntervalSince(outcome.startedAt)
            for seq in answer.first..<answer.first + answer.count {
                let status = outcome.statuses[seq]
                publishes.append(ChaosPublish(
                    seq: seq, transport: .http, sentAt: at, status: status > 0 ? Int(status) : nil, retryAfter: answer.retryAfter, error: nil))
            }
        }
        var seen = Set<String>()
        let deliveredAt = pushes.compactMap { push -> Double? in
            seen.insert("\(push.notificationId) \(push.deviceToken)").inserted ? push.receivedAt.timeIntervalSince(outcome.startedAt) : nil
        }
        let overload = ChaosReport.FaultOutcome(
            name: "overload (above the limit)", injectedAt: 0, recoveredAt: overloadSeconds, recoverySeconds: nil, databaseWritableAfter: nil,
            failure: nil)
        return ChaosTimelineSVG.render(publishes: publishes, deliveredAt: deliveredAt, faults: [overload], title: title)
    }

    /// Writes report.json, report.md and timeline.svg into `directory` and prints the Markdown.
    func write(to directory: String, timeline: String) throws {
        let url = URL(fileURLWithPath: directory, isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        try encoder.encode(self).write(to: url.appending(path: "report.json"))
        try Data(markdown.utf8).write(to: url.appending(path: "report.md"))
        try Data(timeline.utf8).write(to: url.appending(path: "timeline.svg"))
        print(markdown)
    }
}
