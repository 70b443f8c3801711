import ArgumentParser
import Foundation
import Logging
import NotifyDatabase
import NotifyModels
import NotifyRuntime
import PostgresNIO

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
    private struct Accepted: Decodable { let id: String }

    func validate() throws {
        guard (1...1_000_000).contains(devices) else { throw ValidationError("--devices must be between 1 and 1,000,000.") }
        try endpoints.check(publishesOverHTTP: false)
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        var logger = Logger(label: "loadgen")
        logger.logLevel = .warning
        let (ingestURL, sandboxURL, sandboxAPNsURL, adminToken) = try endpoints.resolved()
        let client = JSONClient(connectionsPerHost: 4)
        let setup = StackSetup(
            client: client, ingestURL: ingestURL, sandboxURL: sandboxURL, sandboxAPNsURL: sandboxAPNsURL, adminToken: adminToken,
            keyFile: ".local/loadgen/apns-key.json")
        let app = try await setup.createApp(runTag: "broadcast")
        let eventSource = "loadgen-broadcast"
        struct Defined: Decodable { let name: String }
        _ = try await client.call(
            .POST, "\(ingestURL)/v1/apps/\(app.appId)/event-sources", bearer: app.apiKey,
            json: EventSourceRequest(name: eventSource, policy: .appServer), as: Defined.self)

        let database = try DatabaseURL.makeClient(
            databaseURL ?? environment["NOTIFY_WRITER_DATABASE_URL"] ?? "postgres://notify_writer:notify_writer@127.0.0.1:21432/notify",
            maximumConnections: 2, logger: logger)
        let running = Task { await database.run() }
        let seedStarted = ContinuousClock.now
        var seeded = 0
        while seeded < devices {
            let count = min(10_000, devices - seeded)
            let ids = (0..<count).map { _ in UUID() }
            let tokens = (0..<count).map { _ in StackSetup.randomDeviceToken() }
            let users = (0..<count).map { "broadcast-user-\(seeded + $0)" }
            try await database.query(
                """
                WITH added AS (
                    INSERT INTO subscriptions (subscription_id, app_id, user_id, platform, push_token, expires_at, registered_at)
                    SELECT id, \(app.appId), usr, 'apns', token, now() + interval '1 day', now()
                    FROM unnest(\(ArrayParameter(ids))::uuid[], \(ArrayParameter(users))::text[], \(ArrayParameter(tokens))::text[]) AS t(id, usr, token)
                    RETURNING subscription_id
                )
                INSERT INTO event_source_members (app_id, event_source, subscription_id)
                SELECT \(app.appId), \(eventSource), subscription_id FROM added
                """, logger: logger)
            seeded += count
        }
        // Done as PostgreSQL's autovacuum would soon do it, or it lands in the broadcast (the audience of a real one
        // was not inserted a moment before): several seconds of CPU for a million rows.
        try await database.query("VACUUM (ANALYZE) subscriptions, event_source_members, device_versions", logger: logger)
        running.cancel()
        let seedTime = ContinuousClock.now - seedStarted
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
        let body: [String: Any] = [
            "eventSource": eventSource,
            "payload": ["visualContent": ["title": "Broadcast", "body": "To \(devices) devices"]],
        ]
        let answer = try await client.send(.POST, "\(ingestURL)/v1/apps/\(app.appId)/notifications", bearer: app.apiKey,
                                           body: try JSONSerialization.data(withJSONObject: body))
        _ = try JSONClient.decode(Accepted.self, answer, method: .POST, url: "publish")
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
