import Foundation

/// Everything a run measured; written as report.json and rendered as report.md.
struct LoadReport: Codable, Sendable {
    struct Settings: Codable, Sendable {
        var ingestURL: String
        var users: Int
        var devicesPerUser: Int
        var count: Int
        var rate: Double
        var batch: Int
        var concurrency: Int
        var durationLimitSeconds: Int
        var drainTimeoutSeconds: Int
    }

    var startedAt: Date
    var settings: Settings
    var appId: String
    var registrationsNotYetVisible: Int
    var sent: Int
    var requests: Int
    var accepted: Int
    /// Answered 429 or 503.
    var refused: Int
    /// Answered anything else, or not at all.
    var failed: Int
    var answers: AnswerCounts
    var stoppedByDurationLimit: Bool
    var publishSeconds: Double
    /// Requests answered per second of the publish phase.
    var requestsPerSecond: Double
    var acceptedPerSecond: Double
    var expectedPushes: Int
    var deliveredPushes: Int
    var lost: Int
    var duplicated: Int
    var unexpected: Int
    var misrouted: Int
    var unreadable: Int
    var pushesBeforeAccepted: Int
    var drainTimedOut: Bool
    var deliverySeconds: Double?
    var deliveredPerSecond: Double?
    var endToEndLatencyMs: LatencyStats
    /// Request -> answer of the requests answered 202.
    var publishLatencyMs: LatencyStats
    /// Request -> answer of the requests refused (429, 503).
    var refusalLatencyMs: LatencyStats
    var peakMemory: [ProcessMemory.Peak]
    /// Over AMQP: the verdicts ingest sent to the reply queue.
    var amqpReplies: AMQPReplyCollector.Summary?
    /// Where the CPU went from the first publish to the last push.
    var cpu: ProcessCPU.Usage
    /// AMQP messages and PostgreSQL transactions per notification; nil when not counted.
    var traffic: PipelineTraffic?
    /// Whether delivery kept pace with publishing.
    var backlog: BacklogCheck

    func markdown() -> String {
        func number(_ value: Double) -> String { String(format: "%.1f", value) }
        func ms(_ value: Double) -> String { String(format: "%.1f", value) }
        let s = settings
        var rows: [(String, String)] = [
            ("Settings", "\(s.users) users × \(s.devicesPerUser) devices, \(s.count) notifications, rate \(s.rate == 0 ? "flat out" : number(s.rate) + "/s"), batch \(s.batch), concurrency \(s.concurrency)"),
            ("Sent / accepted (202) / refused (429, 503) / failed", "\(sent) / \(accepted) / \(refused) / \(failed) in \(requests) requests"),
            ("Answers by status (notifications)", answers.summary
                + (answers.refusedWithoutRetryAfter > 0 ? "; \(answers.refusedWithoutRetryAfter) refused without Retry-After" : "")),
            ("Publish phase", "\(number(publishSeconds)) s\(stoppedByDurationLimit ? " (stopped by --duration-limit)" : "")"),
            ("Requests/s", number(requestsPerSecond)),
            ("Accepted/s", number(acceptedPerSecond)),
            ("Expected pushes", "\(expectedPushes)"),
            ("Delivered pushes", "\(deliveredPushes)"),
            ("Delivered pushes/s (first 202 → last push)", deliveredPerSecond.map(number) ?? "n/a"),
            ("Lost", "\(lost)\(drainTimedOut ? " (drain timeout reached)" : "")"),
            ("Duplicated", "\(duplicated)"),
            ("E2E latency 202 → sandbox p50 / p90 / p99 / p99.9 / max (ms)",
             "\(ms(endToEndLatencyMs.p50)) / \(ms(endToEndLatencyMs.p90)) / \(ms(endToEndLatencyMs.p99)) / \(ms(endToEndLatencyMs.p99_9)) / \(ms(endToEndLatencyMs.max))"),
            ("Request latency, answered 202, p50 / p90 / p99 / p99.9 / max (ms)",
             "\(ms(publishLatencyMs.p50)) / \(ms(publishLatencyMs.p90)) / \(ms(publishLatencyMs.p99)) / \(ms(publishLatencyMs.p99_9)) / \(ms(publishLatencyMs.max))"),
        ]
        if refusalLatencyMs.count > 0 {
            rows.append(("Request latency, refused (429, 503), p50 / p99 / max (ms)",
                         "\(ms(refusalLatencyMs.p50)) / \(ms(refusalLatencyMs.p99)) / \(ms(refusalLatencyMs.max))"))
        }
        if let replies = amqpReplies {
            rows.append(("AMQP replies (verdicts) / answered/s", "\(replies.answered) / \(number(replies.answeredPerSecond))"))
            rows.append(("AMQP replies by x-notify-status", replies.byStatus.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")))
            let latency = replies.latencyMs
            rows.append(("AMQP publish → reply p50 / p90 / p99 / p99.9 / max (ms)",
                         "\(ms(latency.p50)) / \(ms(latency.p90)) / \(ms(latency.p99)) / \(ms(latency.p99_9)) / \(ms(latency.max))"))
        }
        if unexpected + misrouted + unreadable > 0 {
            rows.append(("Unexpected / misrouted / unreadable pushes", "\(unexpected) / \(misrouted) / \(unreadable)"))
        }
        if pushesBeforeAccepted > 0 {
            rows.append(("Pushes recorded before their 202 was read (latency 0)", "\(pushesBeforeAccepted)"))
        }
        if registrationsNotYetVisible > 0 {
            rows.append(("Registrations answered 202 (not yet visible)", "\(registrationsNotYetVisible)"))
        }
        for peak in peakMemory {
            rows.append(("Peak memory (VmHWM) \(peak.service)", peak.display))
        }
        rows += cpu.rows
        rows += traffic?.rows ?? []
        rows += backlog.rows
        var text = "# loadgen http — \(startedAt.formatted(.iso8601))\n\n| Metric | Value |\n|---|---|\n"
        for (name, value) in rows { text += "| \(name) | \(value) |\n" }
        return text
    }
}
