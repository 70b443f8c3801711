import ArgumentParser
import Foundation
import NotifyRuntime

/// `loadgen sweep-report`: gathers the reports of a sweep's `loadgen http` runs into one table and one plot.
struct SweepReportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sweep-report",
        abstract: "Gather the reports of several `loadgen http` runs into sweep.md (tables) and sweep.svg (plots).",
        discussion: """
            Reads report.json from each directory given (named after the point, e.g. rate-1000-d3) and writes to \
            --output: sweep.md, a table of every point (requests/s, request latency p50/p99, 202 -> push p50/p99, \
            lost/duplicated, CPU per notification, AMQP messages and PostgreSQL transactions per notification, last \
            202 -> last push, whether delivery kept up), CPU per notification by process, and the highest fixed rate \
            held for at least --steady-seconds without a growing backlog, per kind of point; and sweep.svg, latency \
            and CPU per notification against requests/s. deploy/local/benchmark.sh's sweep mode runs the points and \
            this. Directories without a readable report.json are skipped, with a warning.
            """
    )

    @Option(help: "Directory for sweep.md and sweep.svg.")
    var output: String
    @Option(help: "Seconds of publishing a fixed-rate point needs to count as held steadily.")
    var steadySeconds = 60.0
    @Argument(help: "Directories holding a `loadgen http` report.json, in the order of the table.")
    var directories: [String]

    /// Processes first in the CPU table, in this order; the others follow by name.
    static let processOrder = ["ingest", "storage", "fanout", "push-dispatch", "rabbitmq", "postgres", "provider-sandbox", "loadgen"]

    func validate() throws {
        guard !directories.isEmpty else { throw ValidationError("name at least one report directory.") }
        guard steadySeconds > 0 else { throw ValidationError("--steady-seconds must be more than 0.") }
    }

    func run() async throws {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        var points: [SweepPoint] = []
        for directory in directories {
            let url = URL(fileURLWithPath: directory).appending(path: "report.json")
            guard FileManager.default.fileExists(atPath: url.path) else {
                HTTPLoadCommand.log("skipping \(directory): no report.json")
                continue
            }
            do {
                points.append(SweepPoint(name: url.deletingLastPathComponent().lastPathComponent, report: try decoder.decode(LoadReport.self, from: Data(contentsOf: url))))
            } catch {
                HTTPLoadCommand.log("skipping \(directory): \(error)")
            }
        }
        guard !points.isEmpty else { throw LoadGenError("no readable report.json in the directories given") }
        let url = URL(fileURLWithPath: output, isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        let markdown = self.markdown(points)
        try Data(markdown.utf8).write(to: url.appending(path: "sweep.md"))
        let title = "loadgen http sweep, \(points.count) points, \(points[0].report.startedAt.formatted(.iso8601.year().month().day()))"
        try Data(SweepSVG.render(points: points, title: title).utf8).write(to: url.appending(path: "sweep.svg"))
        print(markdown)
        HTTPLoadCommand.log("wrote \(output)/sweep.md, sweep.svg")
    }

    private func markdown(_ points: [SweepPoint]) -> String {
        func ms(_ stats: LatencyStats) -> String { String(format: "%.1f / %.1f", stats.p50, stats.p99) }
        func per(_ count: Int?, _ report: LoadReport) -> String {
            count.map { String(format: "%.2f", Double($0) / Double(Swift.max(report.accepted, 1))) } ?? "n/a"
        }
        var lines = [
            "# loadgen http sweep (\(points[0].report.startedAt.formatted(.iso8601)))", "",
            "| point | offered | devices | requests/s | request p50 / p99 ms | 202 → push p50 / p99 ms | lost / dup | CPU µs / notification "
                + "| context switches / notification | AMQP msgs / notification (published / delivered) | PostgreSQL transactions / notification | last 202 → last push | kept up |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for point in points {
            let report = point.report
            let traffic = report.traffic
            let cells = [
                point.name, point.offered, "\(report.settings.devicesPerUser)", NumberText.grouped(report.requestsPerSecond),
                ms(report.publishLatencyMs), ms(report.endToEndLatencyMs), "\(report.lost) / \(report.duplicated)",
                String(format: "%.0f", report.cpu.totalMicrosecondsPerUnit),
                String(format: "%.1f", report.cpu.shares.reduce(0) { $0 + ($1.contextSwitchesPerUnit ?? 0) }),
                "\(per(traffic?.amqpPublished, report)) / \(per(traffic?.amqpDelivered, report))", per(traffic?.databaseCommits, report),
                report.backlog.drainSeconds.map { String(format: "%.2f s", $0) } ?? "n/a",
                report.backlog.keptUp ? "yes" : "**no**: " + report.backlog.reasons.joined(separator: "; "),
            ]
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }

        let seen = Set(points.flatMap { $0.report.cpu.shares.map(\.process) })
        let processes = Self.processOrder.filter(seen.contains) + seen.subtracting(Self.processOrder).sorted()
        lines += ["", "CPU per notification by process (µs):", "",
                  "| point | " + processes.joined(separator: " | ") + " | all |", "|---|" + processes.map { _ in "---|" }.joined() + "---|"]
        for point in points {
            let shares = Dictionary(point.report.cpu.shares.map { ($0.process, $0.microsecondsPerUnit) }, uniquingKeysWith: +)
            let cells = processes.map { shares[$0].map { String(format: "%.0f", $0) } ?? "—" }
            lines.append("| \(point.name) | " + cells.joined(separator: " | ") + String(format: " | %.0f |", point.report.cpu.totalMicrosecondsPerUnit))
        }

        lines += ["", "Highest fixed rate held for at least \(Int(steadySeconds)) s without a growing backlog (kept up: nothing lost, "
            + "refused or failed; the last push within the run's --backlog-limit of the last 202, and the 202 → push p50 grown by at "
            + "most as much from the first 10 s of publishing to the last; 95 % of the rate accepted):", ""]
        let long = points.filter { ($0.plannedSeconds ?? 0) >= steadySeconds * 0.999 }
        if long.isEmpty { lines.append("- no fixed-rate point ran \(Int(steadySeconds)) s or more") }
        for (group, members) in Dictionary(grouping: long, by: \.group).sorted(by: { $0.key < $1.key }) {
            let best = members.filter(\.report.backlog.keptUp).max { $0.report.settings.rate < $1.report.settings.rate }
            let lowestSlip = members.filter { !$0.report.backlog.keptUp }.min { $0.report.settings.rate < $1.report.settings.rate }
            var line = "- \(group): " + (best.map { "\(NumberText.grouped($0.report.settings.rate))/s (\($0.name))" } ?? "none kept up")
            if let lowestSlip {
                line += "; the lowest that did not keep up: \(NumberText.grouped(lowestSlip.report.settings.rate))/s (\(lowestSlip.name))"
            } else {
                line += "; every point kept up, so the highest held may be higher"
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
