import ArgumentParser
import Foundation
import NotifyModels
import NotifyRuntime

/// `loadgen broadcast`: one publish to every device subscribed to an event source; time until the last push.
struct BroadcastBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "broadcast",
        abstract: "One publish to an event source with --devices subscribers; time until the last push reaches the sandbox.",
        discussion: """
            Creates an app with APNs credentials at the sandbox, seeds --devices APNs subscriptions subscribed \
            to one event source straight into PostgreSQL (in batches of 10,000, then VACUUM ANALYZE, all counted \
            as seeding), publishes one notification to that event source through ingest, and watches the \
            sandbox's delivery counter (lastId) until --devices pushes arrived or --timeout passed. Fanout \
            streams the audience page by page. Nothing else should push through the sandbox meanwhile (the \
            count is the sandbox's, not per app).
            """
    )

    @OptionGroup var endpoints: StackEndpointOptions
    @Option(help: "PostgreSQL URL of the writer role, for seeding. (default: $NOTIFY_WRITER_DATABASE_URL, else the local stack's)")
    var databaseURL: String?
    @Option(help: "Subscribed devices (at most 1,000,000).")
    var devices = 10_000
    @Option(help: "Seconds to wait for the last push.")
    var timeout = 600
    @Option(help: "Directory for report.json and report.md. (default: .local/loadgen/broadcast-<time>)")
    var output: String?
    @OptionGroup var stack: StackStateOption

    private struct Counter: Decodable { let lastId: Int }

    func validate() throws {
        guard (1...1_000_000).contains(devices) else { throw ValidationError("--devices must be between 1 and 1,000,000.") }
        try endpoints.check(publishesOverHTTP: false)
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let (ingestURL, sandboxURL, sandboxAPNsURL, adminToken) = try endpoints.resolved()
        let client = JSONClient(connectionsPerHost: 4)
        let setup = StackSetup(
            client: client, ingestURL: ingestURL, sandboxURL: sandboxURL, sandboxAPNsURL: sandboxAPNsURL, adminToken: adminToken,
            keyFile: ".local/loadgen/apns-key.json")
        let app = try await setup.createApp(runTag: "broadcast")
        let audience = BroadcastAudience(
            client: client, ingestURL: ingestURL, app: (app.appId, app.apiKey), eventSource: "loadgen-broadcast", devices: devices)
        let seedTime = try await audience.seed(
            databaseURL: databaseURL ?? environment["NOTIFY_WRITER_DATABASE_URL"] ?? "postgres://notify_writer:notify_writer@127.0.0.1:21432/notify")
        FileHandle.standardError.write(Data("seeded \(devices) subscribed devices in \(seedTime)\n".utf8))

        // A token no push has: the answer is empty and its lastId is the newest delivery id. Asking only after the
        // last answer keeps the sandbox from scanning every record it holds on each poll.
        var newest = 0
        func delivered() async throws -> Int {
            let counterURL = "\(sandboxURL)/deliveries?token=none&after=\(newest)"
            newest = try JSONClient.decode(Counter.self, try await client.send(.GET, counterURL), method: .GET, url: counterURL).lastId
            return newest
        }
        let start = try await delivered()
        let cpuBefore = ProcessCPU.snapshot(of: stack)
        let memoryBefore = ProcessMemory.read(stack)
        let published = ContinuousClock.now
        _ = try await audience.publish()
        var arrived = 0
        var lastProgress = ContinuousClock.now
        while arrived < devices, ContinuousClock.now - published < .seconds(timeout) {
            try await Task.sleep(for: .milliseconds(250))
            arrived = try await delivered() - start
            if ContinuousClock.now - lastProgress > .seconds(2) {
                FileHandle.standardError.write(Data("\(arrived) of \(devices) pushes arrived\n".utf8))
                lastProgress = ContinuousClock.now
            }
        }
        let elapsed = ContinuousClock.now - published
        let cpuAfter = ProcessCPU.snapshot(of: stack)
        // Peak memory since each service started, before and after: a broadcast held in pages leaves it where it was.
        let memoryAfter = ProcessMemory.read(stack)
        let peaksBefore = Dictionary(memoryBefore.map { ($0.service, $0.peakKiB) }, uniquingKeysWith: { $1 })
        let memory = memoryAfter.sorted { $0.service < $1.service }.compactMap { after -> BenchmarkReport.Figure? in
            guard let from = peaksBefore[after.service] ?? nil, let to = after.peakKiB else { return nil }
            return .init(name: "peak memory (VmHWM) \(after.service), before → after", value: Double(to) / 1024, unit: String(format: "MiB (from %.1f)", Double(from) / 1024))
        }
        try await client.shutdown()
        let report = BenchmarkReport(
            mode: "broadcast", date: Date(), settings: ["devices": "\(devices)"],
            figures: [
                .init(name: "pushes arrived", value: Double(arrived), unit: "of \(devices)"),
                .init(name: "202 to last push", value: elapsed.inSeconds, unit: "s"),
                .init(name: "pushes per second", value: Double(arrived) / max(elapsed.inSeconds, 0.001), unit: "pushes/s"),
                .init(name: "seeding (not part of the broadcast)", value: seedTime.inSeconds, unit: "s"),
            ] + memory,
            cpu: ProcessCPU.usage(from: cpuBefore, to: cpuAfter, units: arrived, unit: "push"))
        try report.write(to: output ?? BenchmarkReport.defaultOutput("broadcast"))
        if arrived < devices { throw ExitCode(1) }
    }
}
