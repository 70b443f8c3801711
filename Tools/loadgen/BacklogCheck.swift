import NotifyRuntime

/// Whether delivery kept pace with publishing, so that a sweep can tell the highest rate held steadily: the time from
/// the last 202 to the last push (the work still queued when publishing stopped), 202 -> push latency at the start
/// and the end of publishing (a backlog that grows makes it grow), and the broker's queue depth over the run. Kept up
/// = nothing lost, refused or failed; the last push within `limitSeconds` of the last 202; the p50 of the last window
/// at most `limitSeconds` above the first's; and at a fixed rate 95 % of it accepted per second.
struct BacklogCheck: Codable, Sendable {
    /// Messages in the broker's queues, `second`s after publishing started.
    struct Sample: Codable, Sendable {
        let second: Double
        let messages: Int
    }

    let limitSeconds: Double
    /// Last 202 -> last push; nil without pushes.
    let drainSeconds: Double?
    /// 202 -> push p50 of the notifications accepted in the first and in the last `windowSeconds` of publishing.
    let windowSeconds: Double
    let firstWindowP50Ms: Double?
    let lastWindowP50Ms: Double?
    let samples: [Sample]
    let queuedMax: Int?
    /// The depth in the last sample taken before publishing ended.
    let queuedAtPublishEnd: Int?
    let keptUp: Bool
    /// Why not, when it did not keep up.
    let reasons: [String]

    static let fixedRateShare = 0.95

    init(
        analysis: Analysis, answers: AnswerCounts, rate: Double, acceptedPerSecond: Double, publishSeconds: Double, samples: [Sample],
        limitSeconds: Double
    ) {
        self.limitSeconds = limitSeconds
        drainSeconds = analysis.drainSeconds
        let window = Swift.min(10, publishSeconds / 4)
        let end = analysis.points.map(\.acceptedOffset).max() ?? 0
        windowSeconds = window
        firstWindowP50Ms = Self.median(analysis.points.filter { $0.acceptedOffset < window }.map(\.latencyMs))
        lastWindowP50Ms = Self.median(analysis.points.filter { $0.acceptedOffset >= end - window }.map(\.latencyMs))
        self.samples = samples
        queuedMax = samples.map(\.messages).max()
        queuedAtPublishEnd = samples.last { $0.second <= publishSeconds }?.messages

        var reasons: [String] = []
        if analysis.lost > 0 { reasons.append("\(analysis.lost) pushes lost") }
        if answers.refused + answers.failed > 0 { reasons.append("\(answers.refused + answers.failed) notifications not accepted") }
        if let drainSeconds, drainSeconds > limitSeconds {
            reasons.append(String(format: "the last push came %.1f s after the last 202 (limit %.1f s)", drainSeconds, limitSeconds))
        } else if drainSeconds == nil {
            reasons.append("no push arrived")
        }
        if let first = firstWindowP50Ms, let last = lastWindowP50Ms, last - first > limitSeconds * 1000 {
            reasons.append(String(format: "202 → push p50 grew from %.0f to %.0f ms through publishing", first, last))
        }
        if rate > 0 && acceptedPerSecond < rate * Self.fixedRateShare {
            reasons.append(String(format: "%.0f accepted/s of %.0f/s offered", acceptedPerSecond, rate))
        }
        self.reasons = reasons
        keptUp = reasons.isEmpty
    }

    private static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        return (values.sorted()[values.count / 2] * 100).rounded() / 100
    }

    /// Markdown rows for the report.
    var rows: [(String, String)] {
        func ms(_ value: Double?) -> String { value.map { String(format: "%.1f", $0) } ?? "n/a" }
        return [
            ("Kept up (no growing backlog)", keptUp ? "yes" : "no: " + reasons.joined(separator: "; ")),
            ("Last 202 → last push", drainSeconds.map { String(format: "%.2f s (limit %.1f s)", $0, limitSeconds) } ?? "n/a"),
            (String(format: "202 → push p50, first / last %.0f s of publishing (ms)", windowSeconds), "\(ms(firstWindowP50Ms)) / \(ms(lastWindowP50Ms))"),
            ("Messages queued in the broker: most / at the end of publishing", "\(queuedMax.map(String.init) ?? "n/a") / \(queuedAtPublishEnd.map(String.init) ?? "n/a")"),
        ]
    }
}
