import ArgumentParser
import Foundation

/// `loadgen overload`: publishes above an app's rate limit, then below it, and checks that ingest kept serving within
/// the limit, refused the rest with 429 + Retry-After, lost nothing it accepted and recovered once the load dropped.
struct OverloadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "overload",
        abstract: "Publish above an app's rate limit, then below it: what was accepted, refused, delivered and lost.",
        discussion: """
            Steps: (1) create an app with APNs credentials at the sandbox and --users x --devices subscriptions; \
            (2) set the app's rate limit to --limit notifications/s and --limit requests/s (PATCH /v1/apps/{appId}, as \
            the operator); (3) publish single-notification requests at --overload-factor x --limit per second for \
            --phase-seconds ("overload"), then at --recovery-factor x --limit per second for --phase-seconds \
            ("recovery"), with at most --concurrency in flight, never sending a refused one again; (4) wait up to \
            --drain-timeout for every accepted notification's pushes; (5) write report.json, report.md and \
            timeline.svg (answers and pushes per second) to --output and print the Markdown.
            Per phase: offered, accepted (202), refused (429, 503: nothing accepted, publish again later) and other \
            answers, pushes delivered for the accepted ones, lost (accepted, never delivered), request latency and \
            202 -> push latency, CPU per request offered. Passes when nothing accepted was lost, the overload phase \
            accepted between 90 % and 105 % of what the limit allows (its rate for the phase, plus the one second's \
            worth the bucket starts with), every refusal carried Retry-After, and the recovery phase accepted \
            everything after its first second (the overload leaves the app's token bucket empty). Only loopback URLs \
            are accepted. Exit status 1 when it did not pass.
            """
    )

    @OptionGroup var endpoints: StackEndpointOptions
    @Option(help: "The app's rate limit: notifications per second, and requests per second (1 to 100,000).")
    var limit = 500
    @Option(help: "The overload phase offers this many times --limit per second.")
    var overloadFactor = 3.0
    @Option(help: "The recovery phase offers this many times --limit per second (below 1: all should be accepted).")
    var recoveryFactor = 0.5
    @Option(help: "Seconds of each phase (5 to 600).")
    var phaseSeconds = 30
    @Option(help: "Users to register.")
    var users = 1000
    @Option(help: "APNs devices per user.")
    var devices = 3
    @Option(help: "Requests in flight at most (publishing and registration).")
    var concurrency = 64
    @Option(help: "Seconds to wait after publishing for the last pushes.")
    var drainTimeout = 120
    @Option(help: "Directory for report.json, report.md and timeline.svg. (default: .local/loadgen/overload-<time>)")
    var output: String?
    @Option(help: "File keeping the sandbox APNs key between runs (\"\" = a new key every run); see `loadgen http --help`.")
    var apnsKeyFile = ".local/loadgen/apns-key.json"
    @OptionGroup var stack: StackStateOption

    func validate() throws {
        guard (1...100_000).contains(limit) else { throw ValidationError("--limit must be between 1 and 100,000.") }
        guard (5...600).contains(phaseSeconds) else { throw ValidationError("--phase-seconds must be between 5 and 600.") }
        guard overloadFactor > 1, recoveryFactor > 0, recoveryFactor < overloadFactor else {
            throw ValidationError("--overload-factor must be above 1, --recovery-factor above 0 and below it.")
        }
        let offered = Double(limit) * (overloadFactor + recoveryFactor) * Double(phaseSeconds)
        guard offered <= Double(HTTPLoadCommand.maximumCount) else { throw ValidationError("at most 1,000,000 notifications in all.") }
        guard users >= 1, devices >= 1, users * devices <= 1_000_000 else { throw ValidationError("--users × --devices must be between 1 and 1,000,000.") }
        guard (1...1024).contains(concurrency) else { throw ValidationError("--concurrency must be between 1 and 1024.") }
        guard (0...3600).contains(drainTimeout) else { throw ValidationError("--drain-timeout must be between 0 and 3600.") }
        try endpoints.check(publishesOverHTTP: true)
    }

    func run() async throws {
        let (ingest, sandbox, apns, admin) = try endpoints.resolved()
        let startedAt = Date()
        let stamp = HTTPLoadCommand.stamp(startedAt)
        let report = try await JSONClient.using(connectionsPerHost: concurrency + 2) { client in
            try await run(client: client, ingest: ingest, sandbox: sandbox, apns: apns, admin: admin, startedAt: startedAt, stamp: stamp)
        }
        guard report.passed else { throw ExitCode(1) }
    }

    private func run(
        client: JSONClient, ingest: String, sandbox: String, apns: String, admin: String, startedAt: Date, stamp: String
    ) async throws -> OverloadReport {
        HTTPLoadCommand.log("overload: setting up 1 app, \(users) users × \(devices) devices")
        let setup = StackSetup(client: client, ingestURL: ingest, sandboxURL: sandbox, sandboxAPNsURL: apns, adminToken: admin,
            keyFile: apnsKeyFile.isEmpty ? nil : apnsKeyFile)
        let fixture = try await setup.run(users: users, devicesPerUser: devices, concurrency: concurrency, runTag: "overload \(stamp)")
        try await AppRateLimit(perSecond: limit).apply(client: client, ingest: ingest, admin: admin, appId: fixture.appId)

        let phases = [("overload", overloadFactor), ("recovery", recoveryFactor)]
        let schedule = RateSchedule(steps: phases.map { _, factor in
            let rate = Double(limit) * factor
            return RateSchedule.Step(rate: rate, count: Swift.max(Int((rate * Double(phaseSeconds)).rounded()), 1))
        })
        let count = schedule.steps.reduce(0) { $0 + $1.count }
        let counters = LiveCounters()
        let collector = DeliveryCollector(client: client, sandboxURL: sandbox, tokens: Set(fixture.deviceTokens.joined()), counters: counters)
        try await collector.startAtNewest()
        let poller = Task { await collector.pollUntilCancelled() }
        let progress = Task { await HTTPLoadCommand.showProgress(counters, count: count, devices: devices) }
        HTTPLoadCommand.log("publishing \(count) notifications: \(Int(schedule.steps[0].rate))/s, then \(Int(schedule.steps[1].rate))/s, against a limit of \(limit)/s")
        let cpuAtStart = ProcessCPU.snapshot(of: stack)
        // The CPU at the boundary between the phases, read on time whatever the publishing is doing.
        let boundary = Task {
            try? await Task.sleep(for: .seconds(phaseSeconds))
            return ProcessCPU.snapshot(of: stack)
        }
        let publisher = Publisher(
            transport: try .http(ingestURL: ingest, fixture: fixture), fixture: fixture,
            settings: .init(count: count, schedule: schedule, batch: 1, concurrency: concurrency, durationLimit: .seconds(2 * phaseSeconds + 60)),
            counters: counters)
        let outcome = await publisher.run()
        poller.cancel()
        await poller.value
        let cpuAtBoundary = await boundary.value

        let answers = AnswerCounts(outcome, sequences: 0..<count)
        let expected = answers.accepted * devices
        HTTPLoadCommand.log("published: \(answers.summary); draining up to \(drainTimeout) s for \(expected) pushes")
        let drainTimedOut = !(await collector.drain(expected: expected, timeout: .seconds(drainTimeout)))
        let cpuAtEnd = ProcessCPU.snapshot(of: stack)
        // Duplicates sent right after the last push are counted too.
        try? await Task.sleep(for: .seconds(1))
        try? await collector.pollOnce()
        progress.cancel()
        await progress.value

        let pushes = await collector.pushes
        let cpu = [(cpuAtStart, cpuAtBoundary), (cpuAtBoundary, cpuAtEnd)]
        let report = OverloadReport(
            startedAt: startedAt, appId: fixture.appId, limit: limit, users: users, devicesPerUser: devices, concurrency: concurrency,
            drainTimedOut: drainTimedOut,
            phases: phases.indices.map { index in
                let sequences = schedule.sequences(ofStep: index)
                let phaseAnswers = AnswerCounts(outcome, sequences: sequences)
                return OverloadReport.Phase(
                    name: phases[index].0, plannedRate: schedule.steps[index].rate, outcome: outcome, answers: phaseAnswers,
                    analysis: Analysis(outcome: outcome, fixture: fixture, pushes: pushes, sequences: sequences),
                    cpu: ProcessCPU.usage(from: cpu[index].0, to: cpu[index].1, units: outcome.answers.filter { sequences.contains($0.first) }.count, unit: "request offered"),
                    sequences: sequences)
            })
        let directory = output ?? BenchmarkReport.defaultOutput("overload")
        try report.write(
            to: directory,
            timeline: OverloadReport.timeline(outcome: outcome, pushes: pushes, overloadSeconds: Double(phaseSeconds), title: report.title))
        HTTPLoadCommand.log("wrote \(directory)/report.json, report.md, timeline.svg")
        return report
    }
}
