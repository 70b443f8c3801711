import ArgumentParser
import Foundation
import NotifyRuntime

/// `loadgen http`: setup, publish through ingest's HTTP API, match deliveries at the sandbox, report.
struct HTTPLoadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "http",
        abstract: "Publish over ingest's HTTP API and measure delivery at the provider sandbox.",
        discussion: """
            Steps: (1) create an app, an APNs key at the sandbox and the app's APNs credentials (endpoint = \
            --sandbox-apns-url); (2) register --users x --devices APNs subscriptions with random tokens; \
            (3) publish --count notifications round-robin over the users at --rate (or, at --rate 0, a closed \
            loop of --concurrency requests), recording how each was answered (202 accepted; 429 and 503 refused, \
            to be sent again later; anything else failed) and when each 202 arrived; (4) poll the sandbox's \
            GET /deliveries until every (notification, device) push arrived or --drain-timeout passed; (5) write \
            report.json, report.md and latency.svg to --output and print the Markdown.
            Figures: requests/s, request latency, end-to-end latency (the notification's 202 -> the sandbox's \
            receivedAt), lost and duplicated pushes, CPU per notification per process (--state-dir), AMQP messages \
            published and delivered per notification (RabbitMQ's management API, --rabbitmq-management-url) and \
            PostgreSQL transactions per notification (pg_stat_database, --database-url), both counted from before \
            the first publish to --stats-settle seconds after the last push; and whether delivery kept up (no \
            growing backlog): nothing lost, refused or failed, the last push within --backlog-limit seconds of the last \
            202, the 202 -> push p50 of the last 10 s of publishing (a quarter of a shorter run) at most --backlog-limit \
            seconds above the first 10 s's, and at a fixed rate 95 % of it accepted per second.
            Only loopback URLs are accepted. Exit status 1 when a push was lost.
            """
    )

    @OptionGroup var endpoints: StackEndpointOptions
    @Option(help: "Users to register.")
    var users = 100
    @Option(help: "APNs devices per user.")
    var devices = 3
    @Option(help: "Notifications to publish (at most 1,000,000); each goes to every device of one user.")
    var count = 1000
    @Option(help: "Target notifications per second; 0 = flat out (limited by --concurrency).")
    var rate: Double = 0
    @Option(help: "Notifications per request: 1 = single-notification requests, >1 = {\"notifications\":[...]} batches (at most 500).")
    var batch = 1
    @Option(help: "Requests in flight at most (publishing and registration).")
    var concurrency = 32
    @Option(help: "Seconds after which publishing stops by itself.")
    var durationLimit = 300
    @Option(help: "Seconds to wait after publishing for the last pushes.")
    var drainTimeout = 60
    @Option(help: "Directory for report.json, report.md and latency.svg. (default: .local/loadgen/<timestamp>)")
    var output: String?
    @Option(help: """
        File keeping the sandbox APNs key between runs ("" = a new key every run). Reusing it keeps \
        push-dispatch's provider token stable on its shared sandbox connection.
        """)
    var apnsKeyFile = ".local/loadgen/apns-key.json"
    @Option(help: """
        How notifications reach ingest: http (POST /v1/apps/{appId}/notifications), or amqp (the same JSON on the \
        notify.ingest exchange, as the least-privilege broker user the app is created with; accepted = the broker's \
        confirm; the verdicts come back on a reply queue and are reported as answered/s).
        """)
    var transport = "http"
    @Option(help: "RabbitMQ URL for --transport amqp: its host, port and vhost (loadgen logs in as the app's user). (default: $NOTIFY_AMQP_URL, else the local stack's)")
    var amqpURL: String?
    @Option(help: """
        RabbitMQ's management API as its administrator, http://user:password@host:port, for the AMQP messages per \
        notification and the queue depths ("" = neither). (default: $NOTIFY_RABBITMQ_MANAGEMENT_URL, else the local stack's)
        """)
    var rabbitmqManagementURL: String?
    @Option(help: "PostgreSQL URL, for the transactions per notification (\"\" = not counted). (default: $NOTIFY_WRITER_DATABASE_URL, else the local stack's)")
    var databaseURL: String?
    @Option(help: """
        Seconds to wait before reading the broker's and PostgreSQL's counters, after setup and after the last push: \
        RabbitMQ's management API refreshes them every 5 s, PostgreSQL's idle backends report theirs up to 10 s late.
        """)
    var statsSettle = 11
    @Option(help: """
        Seconds of queued work that still count as delivery keeping up: at most this from the last 202 to the last push, \
        and as much growth of the 202 -> push p50 from the first 10 s of publishing to the last.
        """)
    var backlogLimit = 0.5
    @OptionGroup var stack: StackStateOption

    static let maximumCount = 1_000_000

    func validate() throws {
        guard (1...Self.maximumCount).contains(count) else { throw ValidationError("--count must be between 1 and 1,000,000.") }
        guard users >= 1, devices >= 1 else { throw ValidationError("--users and --devices must be 1 or more.") }
        guard users * devices <= 1_000_000 else { throw ValidationError("--users × --devices must be at most 1,000,000.") }
        guard rate >= 0, rate.isFinite else { throw ValidationError("--rate must be 0 or more.") }
        guard transport == "http" || transport == "amqp" else { throw ValidationError("--transport must be http or amqp.") }
        guard (1...500).contains(batch) else { throw ValidationError("--batch must be between 1 and 500.") }
        guard (1...1024).contains(concurrency) else { throw ValidationError("--concurrency must be between 1 and 1024.") }
        guard durationLimit >= 1, drainTimeout >= 0 else { throw ValidationError("--duration-limit must be 1 or more, --drain-timeout 0 or more.") }
        guard (0...60).contains(statsSettle) else { throw ValidationError("--stats-settle must be between 0 and 60.") }
        guard backlogLimit > 0, backlogLimit.isFinite else { throw ValidationError("--backlog-limit must be more than 0.") }
        try endpoints.check(publishesOverHTTP: transport == "http")
    }

    func run() async throws {
        let (ingest, sandbox, apns, admin) = try endpoints.resolved()
        let startedAt = Date()
        let stamp = Self.stamp(startedAt)
        let outputDirectory = output ?? ".local/loadgen/\(stamp)"
        let exitCode = try await JSONClient.using(connectionsPerHost: concurrency + 2) { client in
            try await run(
                client: client, ingest: ingest, sandbox: sandbox, apns: apns, admin: admin, startedAt: startedAt, stamp: stamp,
                outputDirectory: outputDirectory)
        }
        if exitCode != 0 { throw ExitCode(exitCode) }
    }

    private func run(
        client: JSONClient, ingest: String, sandbox: String, apns: String, admin: String, startedAt: Date, stamp: String,
        outputDirectory: String
    ) async throws -> Int32 {
        Self.log("setting up: 1 app, \(users) users × \(devices) devices")
        let setup = StackSetup(client: client, ingestURL: ingest, sandboxURL: sandbox, sandboxAPNsURL: apns, adminToken: admin,
            keyFile: apnsKeyFile.isEmpty ? nil : apnsKeyFile)
        let fixture = try await setup.run(
            users: users, devicesPerUser: devices, concurrency: concurrency, runTag: stamp, brokerAccess: transport == "amqp")
        let amqp: AMQPSession?
        if transport == "amqp" {
            guard let broker = fixture.broker else { throw ValidationError("ingest answered no broker credentials for the app") }
            amqp = try await AMQPSession.open(
                url: amqpURL ?? ProcessInfo.processInfo.environment["NOTIFY_AMQP_URL"] ?? "amqp://notify:notify@127.0.0.1:21672/notify", broker: broker)
        } else {
            amqp = nil
        }
        defer {
            if let amqp { Task { await amqp.close() } }
        }
        let transport = try amqp?.transport ?? .http(ingestURL: ingest, fixture: fixture)
        let counters = LiveCounters()
        let collector = DeliveryCollector(
            client: client, sandboxURL: sandbox, tokens: Set(fixture.deviceTokens.joined()), counters: counters)
        try await collector.startAtNewest()
        let (broker, database) = try counterSources(client: client)
        defer { database?.close() }
        let counting = broker != nil || database != nil
        if counting && statsSettle > 0 {
            Self.log("waiting \(statsSettle) s for the broker's and PostgreSQL's counters to take in the setup")
            try await Task.sleep(for: .seconds(statsSettle))
        }
        let trafficBefore = counting ? await PipelineTraffic.Snapshot.read(broker: broker, database: database) : nil

        let poller = Task { await collector.pollUntilCancelled() }
        let progress = Task { await Self.showProgress(counters, count: count, devices: devices) }
        Self.log("publishing \(count) notifications (app \(fixture.appId))")
        let cpuBefore = ProcessCPU.snapshot(of: stack)
        let sampler = broker.map { QueueDepthSampler.start($0, origin: .now) }
        let publisher = Publisher(
            transport: transport, fixture: fixture,
            settings: .init(
                count: count, schedule: .fixed(rate: rate, count: count), batch: batch, concurrency: concurrency,
                durationLimit: .seconds(durationLimit)),
            counters: counters)
        let outcome = await publisher.run()
        poller.cancel()
        await poller.value

        let answers = AnswerCounts(outcome, sequences: 0..<count)
        let expected = answers.accepted * devices
        await amqp?.replies.waitForAnswers(outcome.requests, timeout: .seconds(drainTimeout))
        Self.log("published: \(answers.accepted) accepted of \(outcome.sent) sent (\(answers.summary)); draining up to \(drainTimeout) s for \(expected) pushes")
        let drainTimedOut = !(await collector.drain(expected: expected, timeout: .seconds(drainTimeout)))
        let cpuAfter = ProcessCPU.snapshot(of: stack)
        sampler?.cancel()
        let samples = await sampler?.value ?? []
        // Duplicates sent right after the last push are counted too, and the counters take in the run's end.
        let settle = counting ? Swift.max(statsSettle, 1) : 1
        if settle > 1 { Self.log("waiting \(settle) s for the last duplicates and the broker's and PostgreSQL's counters") }
        try? await Task.sleep(for: .seconds(settle))
        try? await collector.pollOnce()
        let trafficAfter = counting ? await PipelineTraffic.Snapshot.read(broker: broker, database: database) : nil
        progress.cancel()
        await progress.value

        let analysis = Analysis(outcome: outcome, fixture: fixture, pushes: await collector.pushes)
        let publishSeconds = Swift.max(outcome.endedAt.timeIntervalSince(outcome.startedAt), 0.001)
        let acceptedPerSecond = Double(answers.accepted) / publishSeconds
        let report = LoadReport(
            startedAt: startedAt,
            settings: .init(
                ingestURL: ingest, users: users, devicesPerUser: devices, count: count, rate: rate, batch: batch,
                concurrency: concurrency, durationLimitSeconds: durationLimit, drainTimeoutSeconds: drainTimeout),
            appId: fixture.appId,
            registrationsNotYetVisible: fixture.registrationsNotYetVisible,
            sent: outcome.sent, requests: outcome.requests, accepted: answers.accepted, refused: answers.refused, failed: answers.failed,
            answers: answers, stoppedByDurationLimit: outcome.stoppedByDurationLimit,
            publishSeconds: publishSeconds, requestsPerSecond: Double(outcome.answers.count) / publishSeconds,
            acceptedPerSecond: acceptedPerSecond,
            expectedPushes: analysis.expectedPushes, deliveredPushes: analysis.deliveredPushes,
            lost: analysis.lost, duplicated: analysis.duplicated, unexpected: analysis.unexpected,
            misrouted: analysis.misrouted, unreadable: await collector.unreadable,
            pushesBeforeAccepted: analysis.beforeAccepted, drainTimedOut: drainTimedOut,
            deliverySeconds: analysis.deliverySeconds,
            deliveredPerSecond: analysis.deliverySeconds.map { Double(analysis.deliveredPushes) / Swift.max($0, 0.001) },
            endToEndLatencyMs: LatencyStats(analysis.endToEnd),
            publishLatencyMs: LatencyStats(analysis.publish),
            refusalLatencyMs: LatencyStats(analysis.refusal),
            peakMemory: ProcessMemory.read(stack),
            amqpReplies: amqp?.replies.summary,
            cpu: ProcessCPU.usage(from: cpuBefore, to: cpuAfter, units: answers.accepted, unit: "notification"),
            traffic: trafficBefore.flatMap { before in
                trafficAfter.map { PipelineTraffic(from: before, to: $0, notifications: answers.accepted, settleSeconds: statsSettle) }
            },
            backlog: BacklogCheck(
                analysis: analysis, answers: answers, rate: rate, acceptedPerSecond: acceptedPerSecond, publishSeconds: publishSeconds,
                samples: samples, limitSeconds: backlogLimit))
        let markdown = report.markdown()
        try ReportWriter.write(report: report, markdown: markdown, analysis: analysis, to: outputDirectory)
        print(markdown)
        Self.log("wrote \(outputDirectory)/report.json, report.md, latency.svg")
        if report.lost > 0 {
            Self.log("\(report.lost) of \(report.expectedPushes) pushes were lost")
            return 1
        }
        return 0
    }

    /// The broker's and the database's counters this run reads, where their URLs are not "".
    private func counterSources(client: JSONClient) throws -> (BrokerStats?, DatabaseStats?) {
        let environment = ProcessInfo.processInfo.environment
        let management = rabbitmqManagementURL ?? environment["NOTIFY_RABBITMQ_MANAGEMENT_URL"] ?? "http://notify:notify@127.0.0.1:21673"
        let database = databaseURL ?? environment["NOTIFY_WRITER_DATABASE_URL"] ?? "postgres://notify_writer:notify_writer@127.0.0.1:21432/notify"
        return (
            try management.isEmpty ? nil : BrokerStats(managementURL: management, client: client),
            try database.isEmpty ? nil : DatabaseStats(url: database))
    }

    /// Logs the run's progress once a second until cancelled.
    static func showProgress(_ counters: LiveCounters, count: Int, devices: Int) async {
        let start = ContinuousClock.now
        var previous = counters.snapshot
        var previousTime = start
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(1))
            let now = ContinuousClock.now
            let current = counters.snapshot
            let seconds = (now - previousTime).inSeconds
            let acceptRate = Double(current.accepted - previous.accepted) / Swift.max(seconds, 0.001)
            let pushRate = Double(current.delivered - previous.delivered) / Swift.max(seconds, 0.001)
            log(String(
                format: "sent %d/%d  accepted %d  refused %d  failed %d  delivered %d/%d  (%.0f accepted/s, %.0f pushes/s)",
                current.sent, count, current.accepted, current.refused, current.failed, current.delivered, current.accepted * devices,
                acceptRate, pushRate))
            previous = current
            previousTime = now
        }
    }

    /// A run's time as its report directory and run tag name it: `2026-11-24T213000` (UTC, no colons).
    static func stamp(_ date: Date) -> String {
        date.formatted(.iso8601.year().month().day().dateTimeSeparator(.standard).time(includingFractionalSeconds: false))
            .replacingOccurrences(of: ":", with: "")
    }

    static func log(_ message: String) {
        FileHandle.standardError.write(Data("loadgen: \(message)\n".utf8))
    }
}
