import ArgumentParser
import Foundation
import Logging
import NotifyAMQP
import NotifyModels

/// `loadgen chaos`: publishes at a fixed rate while a schedule of faults runs, then proves nothing accepted was lost.
struct ChaosCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chaos",
        abstract: "Publish at a fixed rate while faults are injected; check that nothing accepted is lost.",
        discussion: """
            Run by deploy/local/chaos.sh, which starts the stack for it (a three-node RabbitMQ cluster, a Patroni \
            cluster of three PostgreSQL members behind HAProxy, two instances of every service). Steps: (1) set up an app with broker access, --users users with --devices APNs devices \
            each; (2) for --duration seconds publish one notification per request at --rate, alternately over HTTP \
            (round-robin over every --ingest-url) and AMQP (notify.ingest as the app's user, confirmed), never \
            retrying, while the fault schedule runs (kill -9 of each service, one and two at once, graceful restarts, \
            a RabbitMQ node killed, the database's primary lost for good or killed, a standby, an etcd member and \
            HAProxy (a Patroni cluster: patroni-cluster.sh), provider bursts of 5xx, 429, timeouts and dropped \
            connections; at least 26 faults, commands from --scripts; how long the database took writes again after \
            each of its faults is timed through --database-url); (3) wait up to --drain-timeout for every \
            accepted notification to reach every device; (4) read every user's changes feed; (5) write report.json, \
            report.md and timeline.svg to --output and print the Markdown.
            Exit status 1 when a push of an accepted notification was lost, a feed misses one or repeats or skips a \
            sequence, an answer was a 5xx other than 503 with Retry-After, or a fault command failed.
            """
    )

    @Option(name: .customLong("ingest-url"), help: "An ingest instance's base URL; repeat for each instance.")
    var ingestURLs: [String] = ["http://127.0.0.1:21080"]
    @Option(name: .customLong("sandbox-url"), help: "The provider sandbox's control API.")
    var sandboxURL = "http://127.0.0.1:21090"
    @Option(name: .customLong("sandbox-apns-url"), help: "The sandbox's APNs endpoint, stored as the app's APNs endpoint.")
    var sandboxAPNsURL = "https://localhost:21443"
    @Option(help: "Operator token for POST /v1/apps. (default: $NOTIFY_ADMIN_TOKEN, else local-admin-token)")
    var adminToken: String?
    @Option(help: "RabbitMQ URL (or one per node, separated by commas): hosts, ports and vhost; loadgen logs in as the app's user. (default: $NOTIFY_AMQP_URL)")
    var amqpURL: String?
    @Option(help: "The database as the services reach it, to time the database faults. (default: $NOTIFY_WRITER_DATABASE_URL)")
    var databaseURL: String?
    @Option(help: "Directory of the scripts the faults run (services.sh, rabbitmq-cluster.sh, patroni-cluster.sh).")
    var scripts = "deploy/local"
    @Option(help: "Users to register.")
    var users = 30
    @Option(help: "APNs devices per user.")
    var devices = 3
    @Option(help: "Notifications per second.")
    var rate: Double = 20
    @Option(help: "Seconds of publishing (and of faults), 20 to 3600.")
    var duration = 60
    @Option(help: "Seconds to wait after publishing for the last pushes.")
    var drainTimeout = 120
    @Flag(help: "Publish and check without injecting any fault (a baseline).")
    var noFaults = false
    @Option(help: "Directory for report.json, report.md, timeline.svg and faults.log. (default: .local/chaos/<timestamp>)")
    var output: String?

    func validate() throws {
        guard (20...3600).contains(duration) else { throw ValidationError("--duration must be between 20 and 3600 seconds.") }
        guard rate > 0, rate <= 2000, rate * Double(duration) <= 1_000_000 else {
            throw ValidationError("--rate must be above 0 and at most 2000, and --rate × --duration at most 1,000,000.")
        }
        guard users >= 1, devices >= 1, users * devices <= 100_000 else { throw ValidationError("--users × --devices must be between 1 and 100,000.") }
        guard drainTimeout >= 0, drainTimeout <= 3600 else { throw ValidationError("--drain-timeout must be between 0 and 3600.") }
        for url in ingestURLs + [sandboxURL, sandboxAPNsURL] {
            do { _ = try LoopbackURL.parse(url, option: "a URL") } catch { throw ValidationError("\(error)") }
        }
    }

    func run() async throws {
        let ingest = try ingestURLs.map { try LoopbackURL.parse($0, option: "--ingest-url") }
        let sandbox = try LoopbackURL.parse(sandboxURL, option: "--sandbox-url")
        let apns = try LoopbackURL.parse(sandboxAPNsURL, option: "--sandbox-apns-url")
        let admin = adminToken ?? ProcessInfo.processInfo.environment["NOTIFY_ADMIN_TOKEN"] ?? "local-admin-token"
        let stamp = HTTPLoadCommand.stamp(Date())
        let outputDirectory = output ?? ".local/chaos/\(stamp)"
        try FileManager.default.createDirectory(atPath: outputDirectory, withIntermediateDirectories: true)
        let report = try await JSONClient.using(connectionsPerHost: 64) { client in
            try await run(client: client, ingest: ingest, sandbox: sandbox, apns: apns, admin: admin, stamp: stamp, outputDirectory: outputDirectory)
        }
        guard report.passed else { throw ExitCode(1) }
    }

    private func run(
        client: JSONClient, ingest: [String], sandbox: String, apns: String, admin: String, stamp: String, outputDirectory: String
    ) async throws -> ChaosReport {
        HTTPLoadCommand.log("chaos: setting up 1 app, \(users) users × \(devices) devices")
        let setup = StackSetup(client: client, ingestURL: ingest[0], sandboxURL: sandbox, sandboxAPNsURL: apns, adminToken: admin, keyFile: nil)
        let fixture = try await setup.run(users: users, devicesPerUser: devices, concurrency: 16, runTag: "chaos \(stamp)", brokerAccess: true)
        guard let broker = fixture.broker else { throw LoadGenError("ingest answered no broker credentials for the app") }
        var configuration = try AMQPConfiguration(url: amqpURL ?? ProcessInfo.processInfo.environment["NOTIFY_AMQP_URL"] ?? "amqp://127.0.0.1:21672/notify")
        (configuration.user, configuration.password) = broker
        configuration.connectTimeout = .seconds(2)
        var logger = Logger(label: "loadgen")
        logger.logLevel = .error
        let amqp = AMQPPublisher(configuration: configuration, logger: logger)
        amqp.startIfNeeded()
        guard await amqp.waitUntilConnected(timeout: .seconds(10)) else { throw LoadGenError("cannot connect to the broker as \(broker.user)") }

        let counters = LiveCounters()
        let tokens = fixture.deviceTokens.joined()
        let collector = DeliveryCollector(client: client, sandboxURL: sandbox, tokens: Set(tokens), counters: counters)
        try await collector.startAtNewest()
        let poller = Task { await collector.pollUntilCancelled() }
        let count = Int(rate * Double(duration))
        let bodies = NotificationBodies(users: fixture.users, total: count, batched: false)
        let faults = noFaults ? [] : ChaosSchedule.faults(duration: Double(duration))
        let log = "\(outputDirectory)/faults.log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let databaseProbe = try (databaseURL ?? ProcessInfo.processInfo.environment["NOTIFY_WRITER_DATABASE_URL"]).map(DatabaseWritableProbe.init)
        let runner = ChaosFaultRunner(
            scriptsDirectory: scripts, log: log, client: client, sandboxURL: sandbox, deviceTokens: Array(tokens), databaseProbe: databaseProbe)
        let publisher = ChaosPublisher(
            ingestURLs: ingest, fixture: fixture, bodies: bodies, http: client.http, amqp: amqp, rate: rate, counters: counters)

        HTTPLoadCommand.log("chaos: \(count) notifications over \(duration) s with \(faults.count) faults (log: \(log))")
        let progress = Task { await Self.showProgress(counters, devices: devices) }
        let startDate = Date()
        let start = ContinuousClock.now
        async let faultRecords = runner.run(faults, from: start)
        let publishes = await publisher.run(count: count, from: start)
        let records = await faultRecords
        HTTPLoadCommand.log("chaos: publishing done, every fault recovered; draining up to \(drainTimeout) s")
        poller.cancel()
        await poller.value

        let expected = publishes.filter(\.accepted).map { publish in
            (notificationId: bodies.notificationId(ofSequence: publish.seq, appId: fixture.appId),
             deviceTokens: fixture.deviceTokens[bodies.userIndex(ofSequence: publish.seq)])
        }
        _ = await collector.drain(expected: expected, timeout: .seconds(drainTimeout))
        // Duplicates sent right after the last push are counted too.
        try? await Task.sleep(for: .seconds(2))
        try? await collector.pollOnce()
        progress.cancel()
        await progress.value
        await amqp.shutdown()

        HTTPLoadCommand.log("chaos: reading every user's changes feed")
        var feeds: [String: [ChaosFeedEntry]?] = [:]
        for user in fixture.users {
            feeds[user] = try? await Self.feed(of: user, fixture: fixture, ingestURL: ingest[0], client: client)
        }
        let pushes = await collector.pushes
        let report = ChaosReport(
            durationSeconds: Double(duration), rate: rate, fixture: fixture, bodies: bodies, startDate: startDate,
            publishes: publishes, pushes: pushes, feeds: feeds, faultRecords: records)
        let command = (["loadgen"] + CommandLine.arguments.dropFirst()).joined(separator: " ")
        let markdown = report.markdown(command: command)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(report).write(to: URL(fileURLWithPath: "\(outputDirectory)/report.json"))
        try Data(markdown.utf8).write(to: URL(fileURLWithPath: "\(outputDirectory)/report.md"))
        let svg = ChaosTimelineSVG.render(
            publishes: publishes, deliveredAt: pushes.map { $0.receivedAt.timeIntervalSince(startDate) }, faults: report.faults,
            title: "chaos run \(stamp): \(report.passed ? "passed" : "FAILED"), lost \(report.lost)")
        try Data(svg.utf8).write(to: URL(fileURLWithPath: "\(outputDirectory)/timeline.svg"))
        print(markdown)
        HTTPLoadCommand.log("chaos: wrote \(outputDirectory)/report.json, report.md, timeline.svg")
        return report
    }

    private struct FeedPage: Decodable {
        struct Change: Decodable {
            struct Notification: Decodable { let id: UUID }
            let sequence: Int64
            let notification: Notification
        }
        let changes: [Change]
        let cursor: String
        let hasMore: Bool
    }

    /// Every change of `user`'s feed from the start, page by page.
    private static func feed(of user: String, fixture: LoadFixture, ingestURL: String, client: JSONClient) async throws -> [ChaosFeedEntry] {
        let token = try await UserToken.mint(userId: user, appId: fixture.appId, signingKey: fixture.clientSigningKey)
        var entries: [ChaosFeedEntry] = []
        var cursor: String?
        for _ in 0..<10_000 {
            let url = "\(ingestURL)/v1/me/notifications/changes?limit=500" + (cursor.map { "&cursor=\($0)" } ?? "")
            let page = try JSONClient.decode(FeedPage.self, try await client.send(.GET, url, bearer: token), method: .GET, url: url)
            entries += page.changes.map { ChaosFeedEntry(sequence: $0.sequence, id: $0.notification.id) }
            cursor = page.cursor
            if !page.hasMore { break }
        }
        return entries
    }

    private static func showProgress(_ counters: LiveCounters, devices: Int) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(5))
            let now = counters.snapshot
            HTTPLoadCommand.log("chaos: sent \(now.sent)  accepted \(now.accepted)  not accepted \(now.failed)  delivered \(now.delivered)/\(now.accepted * devices)")
        }
    }
}
