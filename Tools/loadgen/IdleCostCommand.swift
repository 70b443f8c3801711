import ArgumentParser
import Foundation
import NotifyRuntime

/// `loadgen idle`: what the local stack costs while nothing is sent: each process's CPU and context switches per
/// second. An app's traffic comes and goes through the day; whatever a process does on a timer is paid all night.
struct IdleCostCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "idle",
        abstract: "Measure the CPU and the context switches each process of the local stack uses per second while idle.",
        discussion: """
            Reads each process's CPU time and its threads' context switches (as the other modes do: the services' \
            pid files, RabbitMQ's and PostgreSQL's process trees) at the start and the end of --seconds, during which \
            this command sends nothing. Run it on a stack nothing else drives.
            """
    )

    @OptionGroup var stack: StackStateOption
    @Option(help: "Seconds to measure (1 to 3,600).")
    var seconds = 30
    @Option(help: "Directory for report.json and report.md. (default: .local/loadgen/idle-<time>)")
    var output: String?

    func validate() throws {
        guard (1...3_600).contains(seconds) else { throw ValidationError("--seconds must be between 1 and 3,600.") }
    }

    func run() async throws {
        let start = ProcessCPU.snapshot(of: stack)
        try await Task.sleep(for: .seconds(seconds))
        let end = ProcessCPU.snapshot(of: stack)
        let elapsed = (end.taken - start.taken).inSeconds
        // One unit per second, so that each share's figures read per second.
        let usage = ProcessCPU.usage(from: start, to: end, units: 1, unit: "second")
        let perSecond = usage.shares.filter { $0.process != "loadgen" }.map { share in
            ProcessCPU.Share(
                process: share.process, cpuMilliseconds: share.cpuMilliseconds, microsecondsPerUnit: share.microsecondsPerUnit / elapsed,
                contextSwitchesPerUnit: (share.contextSwitchesPerUnit ?? 0) / elapsed)
        }
        let report = BenchmarkReport(
            mode: "idle", date: Date(), settings: ["seconds": String(format: "%.1f", elapsed)], figures: [],
            cpu: ProcessCPU.Usage(unit: "second", units: Int(elapsed.rounded()), seconds: elapsed, shares: perSecond))
        try report.write(to: output ?? BenchmarkReport.defaultOutput("idle"))
    }
}
