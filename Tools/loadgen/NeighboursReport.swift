import Foundation

/// One case of `loadgen neighbours`, kept as `<case>.json` in the output directory.
struct NeighbourCaseResult: Codable, Sendable {
    var neighbourCase: NeighbourCase
    var date: Date
    /// The case's settings, as text.
    var settings: [String: String]
    var quiet: QuietResult
    /// A's load; nil when B was alone.
    var neighbour: NeighbourSummary?

    /// Something accepted (of B's or A's) never arrived.
    var lostAnything: Bool { quiet.lost > 0 || (quiet.webhook?.lost ?? 0) > 0 || (neighbour?.lost ?? 0) > 0 }
}

/// The report of `loadgen neighbours`: each case found in the output directory, B's 202 → push latency beside its
/// neighbour against the target, max(2 × B's p99 alone, 250 ms), and what became of A's load and B's.
struct NeighboursReport {
    static let targetFloorMs = 250.0

    /// In the order of `NeighbourCase.allCases`.
    let results: [NeighbourCaseResult]

    /// The p99 B must keep beside a neighbour; nil without the `alone` case.
    var targetMs: Double? {
        results.first { $0.neighbourCase == .alone }.map { Swift.max(2 * $0.quiet.latency.p99, Self.targetFloorMs) }
    }

    /// Every `<case>.json` in `directory`.
    static func read(from directory: URL) throws -> NeighboursReport {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return NeighboursReport(results: try NeighbourCase.allCases.compactMap { neighbourCase in
            let file = directory.appending(path: "\(neighbourCase.rawValue).json")
            guard FileManager.default.fileExists(atPath: file.path) else { return nil }
            return try decoder.decode(NeighbourCaseResult.self, from: Data(contentsOf: file))
        })
    }

    /// Writes `result` as `<case>.json` into `directory`.
    static func save(_ result: NeighbourCaseResult, to directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        try encoder.encode(result).write(to: directory.appending(path: "\(result.neighbourCase.rawValue).json"))
    }

    var markdown: String {
        let target = targetMs
        var lines = ["### loadgen neighbours", ""]
        if let first = results.first {
            lines.append("B (the quiet app): " + first.settings.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ") + ".")
            lines.append("")
        }
        lines.append(
            "Target: B's 202 → push p99 beside a neighbour ≤ max(2 × B's p99 alone, 250 ms)"
                + (target.map { String(format: " = %.0f ms.", $0) } ?? " (no `alone` case measured: no target)."))
        lines += ["", "| case | B p50 | B p99 | B max | target | met? | A summary |", "|---|---|---|---|---|---|---|"]
        for result in results {
            let latency = result.quiet.latency
            let isBaseline = result.neighbourCase == .alone
            let met = target.map { latency.p99 <= $0 ? "yes" : "no" } ?? "—"
            lines.append(
                "| \(result.neighbourCase.rawValue) | \(Self.ms(latency.p50)) | \(Self.ms(latency.p99)) | \(Self.ms(latency.max)) | "
                    + "\(isBaseline ? "—" : target.map(Self.ms) ?? "—") | \(isBaseline ? "—" : met) | \(result.neighbour?.detail ?? "none") |")
        }
        lines += [
            "", "| case | A does | B sent | B accepted | B delivered (late) | B lost | A accepted | A refused | A delivered (late) | A lost |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for result in results {
            let quiet = result.quiet
            let noisy = result.neighbour
            let cells = [
                result.neighbourCase.rawValue, result.neighbourCase.neighbour, NumberText.grouped(quiet.sent),
                NumberText.grouped(quiet.answers.accepted), Self.delivered(quiet.delivered, late: quiet.late), NumberText.grouped(quiet.lost),
                noisy.map { NumberText.grouped($0.accepted) } ?? "—", noisy.map { NumberText.grouped($0.refused) } ?? "—",
                noisy.map { Self.delivered($0.delivered, late: $0.late) } ?? "—", noisy.map { $0.lost.map(NumberText.grouped) ?? "n/a" } ?? "—",
            ]
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        for result in results {
            guard let webhook = result.quiet.webhook else { continue }
            lines += [
                "",
                "B's webhook in `\(result.neighbourCase.rawValue)`: \(webhook.registrations.registered) devices registered "
                    + "(\(webhook.registrations.failed) failed), \(webhook.arrived) events arrived, \(webhook.lost) lost; "
                    + "event createdAt → arrival at B's receiver p50 \(Self.ms(webhook.latency.p50)), p99 \(Self.ms(webhook.latency.p99)), "
                    + "max \(Self.ms(webhook.latency.max)).",
            ]
        }
        lines += [
            "",
            "Late: arrived only after the drain timeout, once A's load was lifted (its faults removed, its webhook deleted); "
                + "B's latency counts them. Lost: accepted and not arrived within a second drain timeout after that. "
                + "A's refused (429) notifications are not losses.",
        ]
        let lost = results.filter(\.lostAnything).map(\.neighbourCase.rawValue)
        lines += ["", lost.isEmpty ? "Nothing accepted was lost." : "Lost something accepted: \(lost.joined(separator: ", "))."]
        return lines.joined(separator: "\n") + "\n"
    }

    /// "1,000", or "1,000 (12)" with late arrivals among them.
    private static func delivered(_ count: Int, late: Int) -> String {
        NumberText.grouped(count) + (late > 0 ? " (\(NumberText.grouped(late)))" : "")
    }

    private static func ms(_ value: Double) -> String {
        value >= 100 ? "\(NumberText.grouped(value)) ms" : String(format: "%.1f ms", value)
    }
}
