import ArgumentParser
import Foundation

/// `loadgen neighbours`: a quiet app's 202 → push latency while another app on the same stack is noisy in one way or
/// another, against the same app alone.
struct NeighboursCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "neighbours",
        abstract: "A quiet app's 202 -> push latency beside a noisy app (a broadcast, a slow provider, a dead webhook, AMQP over its limit) and alone.",
        discussion: """
            In each --case, a quiet app B publishes single notifications over HTTP at --rate per second, round-robin \
            over --users users with one device each, for --seconds, while app A: alone: does nothing (the baseline); \
            broadcast: broadcasts once to --broadcast-devices APNs devices seeded in PostgreSQL (B publishes until \
            its last push arrives, at most --broadcast-timeout seconds); slow-provider: publishes at --neighbour-rate \
            to --neighbour-users Web Push subscriptions the sandbox answers after --slow-delay-ms (B's devices are \
            Web Push too); dead-webhook: registers --webhook-rate devices per second, each a webhook event for a \
            receiver that answers only after --dead-receiver-delay seconds (push-dispatch waits 10 s); in this \
            case and alone, B also registers --quiet-webhook-rate devices per second for a receiver that answers \
            at once; \
            amqp-over-limit: publishes over AMQP as its broker user at --overload-factor times its rate limit \
            (--limit per second) to --neighbour-users APNs devices. Then both wait up to --drain-timeout for what \
            was accepted to arrive. Each case is written to <case>.json in --output, and report.md is rewritten from \
            every case found there: B's 202 -> push p50, p99 and max beside each neighbour against the target \
            max(2 x B's p99 alone, 250 ms), B's webhook latency (the event's createdAt -> its arrival at B's \
            receiver), and what became of A's load and B's (accepted, refused, delivered, lost; a 429 is not a \
            loss). Only loopback URLs are accepted. Exit status 1 when anything accepted was lost.
            """
    )

    @OptionGroup var endpoints: StackEndpointOptions
    @Option(name: .customLong("case"), help: "A case to run (again for more), in the order given: alone, broadcast, slow-provider, dead-webhook, amqp-over-limit. (default: all)")
    var cases: [NeighbourCase] = NeighbourCase.allCases
    @Option(help: "B's notifications per second.")
    var rate = 100.0
    @Option(help: "B's users, one device each.")
    var users = 20
    @Option(help: "Seconds B (and A, but for a broadcast) publishes (5 to 600).")
    var seconds = 30
    @Option(help: "A's broadcast audience (1 to 1,000,000 devices).")
    var broadcastDevices = 100_000
    @Option(help: "Seconds to wait for the broadcast's last push.")
    var broadcastTimeout = 600
    @Option(help: "A's notifications per second in slow-provider, and per second offered in amqp-over-limit is --overload-factor x --limit.")
    var neighbourRate = 100.0
    @Option(help: "A's users, one device each (slow-provider, amqp-over-limit).")
    var neighbourUsers = 100
    @Option(help: "How long the sandbox takes to answer each push to A's Web Push subscriptions, in milliseconds.")
    var slowDelayMs = 5000
    @Option(help: "A's device registrations (webhook events) per second in dead-webhook.")
    var webhookRate = 20.0
    @Option(help: "B's device registrations (webhook events) per second in dead-webhook.")
    var quietWebhookRate = 5.0
    @Option(help: "Seconds A's webhook receiver takes to answer in dead-webhook (above push-dispatch's 10 s: never in time).")
    var deadReceiverDelay = 30
    @Option(help: "A's rate limit in amqp-over-limit, notifications and requests per second.")
    var limit = 200
    @Option(help: "A offers this many times its limit in amqp-over-limit.")
    var overloadFactor = 3.0
    @Option(help: "Seconds to wait after publishing for what was accepted to arrive.")
    var drainTimeout = 300
    @Option(help: "PostgreSQL URL of the writer role, for seeding the broadcast's audience. (default: $NOTIFY_WRITER_DATABASE_URL, else the local stack's)")
    var databaseURL: String?
    @Option(help: "RabbitMQ URL for A's AMQP publishing: its host, port and vhost (loadgen logs in as A's broker user). (default: $NOTIFY_AMQP_URL, else the local stack's)")
    var amqpURL: String?
    @Option(help: "Directory for <case>.json and report.md. (default: .local/loadgen/neighbours-<time>)")
    var output: String?

    func validate() throws {
        guard rate > 0, neighbourRate > 0, webhookRate > 0, quietWebhookRate > 0, limit > 0, overloadFactor > 0 else {
            throw ValidationError("--rate, --neighbour-rate, --webhook-rate, --quiet-webhook-rate, --limit and --overload-factor must be above 0.")
        }
        guard (5...600).contains(seconds) else { throw ValidationError("--seconds must be between 5 and 600.") }
        guard rate * Double(max(seconds, broadcastTimeout)) <= Double(HTTPLoadCommand.maximumCount),
            Double(limit) * overloadFactor * Double(seconds) <= Double(HTTPLoadCommand.maximumCount)
        else { throw ValidationError("at most 1,000,000 notifications per app and case.") }
        guard (1...10_000).contains(users), (1...10_000).contains(neighbourUsers) else {
            throw ValidationError("--users and --neighbour-users must be between 1 and 10,000.")
        }
        guard (1...1_000_000).contains(broadcastDevices) else { throw ValidationError("--broadcast-devices must be between 1 and 1,000,000.") }
        guard (1...3600).contains(broadcastTimeout), (0...3600).contains(drainTimeout) else {
            throw ValidationError("--broadcast-timeout must be between 1 and 3600, --drain-timeout between 0 and 3600.")
        }
        guard (1...600_000).contains(slowDelayMs), (11...600).contains(deadReceiverDelay) else {
            throw ValidationError("--slow-delay-ms must be between 1 and 600000, --dead-receiver-delay between 11 and 600.")
        }
        try endpoints.check(publishesOverHTTP: true)
    }

    func run() async throws {
        let (ingest, sandbox, apns, admin) = try endpoints.resolved()
        let directory = URL(fileURLWithPath: output ?? BenchmarkReport.defaultOutput("neighbours"), isDirectory: true)
        let lost = try await JSONClient.using(connectionsPerHost: 64) { client in
            let setup = StackSetup(
                client: client, ingestURL: ingest, sandboxURL: sandbox, sandboxAPNsURL: apns, adminToken: admin,
                keyFile: ".local/loadgen/apns-key.json")
            var lost = false
            for neighbourCase in cases {
                HTTPLoadCommand.log("neighbours: \(neighbourCase.rawValue): setting up")
                let result = try await run(neighbourCase, setup: setup)
                try NeighboursReport.save(result, to: directory)
                let latency = result.quiet.latency
                HTTPLoadCommand.log(
                    "neighbours: \(neighbourCase.rawValue): B's 202 → push "
                        + String(format: "p50 %.1f ms, p99 %.1f ms, max %.1f ms", latency.p50, latency.p99, latency.max))
                lost = lost || result.lostAnything
            }
            return lost
        }
        let report = try NeighboursReport.read(from: directory)
        try Data(report.markdown.utf8).write(to: directory.appending(path: "report.md"))
        print(report.markdown)
        HTTPLoadCommand.log("wrote \(directory.path)/report.md")
        if lost { throw ExitCode(1) }
    }

    /// Sets up B and A for `neighbourCase`, runs them side by side, and lets A undo what would weigh on the next case.
    private func run(_ neighbourCase: NeighbourCase, setup: StackSetup) async throws -> NeighbourCaseResult {
        let environment = ProcessInfo.processInfo.environment
        let runTag = "\(neighbourCase.rawValue) \(HTTPLoadCommand.stamp(Date()))"
        let quiet = try await QuietApp.setUp(
            setup: setup, users: users, devices: neighbourCase.quietDevices, webhook: neighbourCase.quietWebhook, runTag: runTag)
        let neighbour: (any Neighbour)? =
            switch neighbourCase {
            case .alone: nil
            case .broadcast:
                try await BroadcastNeighbour.setUp(
                    setup: setup, devices: broadcastDevices,
                    databaseURL: databaseURL ?? environment["NOTIFY_WRITER_DATABASE_URL"]
                        ?? "postgres://notify_writer:notify_writer@127.0.0.1:21432/notify",
                    timeout: .seconds(broadcastTimeout))
            case .slowProvider:
                try await PublishingNeighbour.slowProvider(
                    setup: setup, users: neighbourUsers, rate: neighbourRate, delay: .milliseconds(slowDelayMs))
            case .deadWebhook:
                try await DeadWebhookNeighbour.setUp(setup: setup, rate: webhookRate, receiverDelaySeconds: deadReceiverDelay)
            case .amqpOverLimit:
                try await PublishingNeighbour.overLimit(
                    setup: setup, users: neighbourUsers, limit: limit, rate: Double(limit) * overloadFactor,
                    amqpURL: amqpURL ?? environment["NOTIFY_AMQP_URL"] ?? "amqp://notify:notify@127.0.0.1:21672/notify")
            }
        let stop = PublishStop()
        // B publishes through the broadcast, however long it takes (bounded by its timeout); else for --seconds.
        let plan = QuietApp.Plan(
            rate: rate, seconds: neighbourCase == .broadcast ? broadcastTimeout : seconds, stop: stop,
            registrationsPerSecond: quietWebhookRate, drainTimeout: .seconds(drainTimeout))
        HTTPLoadCommand.log("neighbours: \(neighbourCase.rawValue): B publishes \(NumberText.grouped(rate))/s; A \(neighbourCase.neighbour)")
        let publishing = Task { try await quiet.publish(plan) }
        let context = NeighbourContext(seconds: seconds, drainTimeout: .seconds(drainTimeout), quietStop: stop, quietDeliveries: quiet.deliveries)
        let noisy: NeighbourSummary?
        let quietFirst: QuietResult
        let published: QuietApp.Published
        do {
            noisy = try await neighbour?.run(context)
            published = try await publishing.value
            quietFirst = try await quiet.result(of: published, drainTimeout: .seconds(drainTimeout))
        } catch {
            stop.stop()
            _ = try? await publishing.value
            _ = await neighbour?.finish(nil, drainTimeout: .zero)
            throw error
        }
        // With A's load lifted, what B and A had accepted and not yet received may still arrive: late, not lost.
        let summary = await neighbour?.finish(noisy, drainTimeout: .seconds(drainTimeout))
        var quietOutcome = quietFirst
        if quietFirst.lost > 0 {
            quietOutcome = try await quiet.result(of: published, drainTimeout: .seconds(drainTimeout))
            quietOutcome.late = Swift.max(quietOutcome.delivered - quietFirst.delivered, 0)
        }
        return NeighbourCaseResult(
            neighbourCase: neighbourCase, date: Date(),
            settings: [
                "rate": "\(NumberText.grouped(rate))/s over HTTP", "users": "\(users) × 1 device",
                "seconds": "\(seconds) (broadcast: until its last push)",
            ],
            quiet: quietOutcome, neighbour: summary)
    }
}
