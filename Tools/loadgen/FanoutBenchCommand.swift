import ArgumentParser
import Foundation
import Logging
import NotifyAMQP
import NotifyDatabase
import NotifyModels
import NotifyRuntime
import NotifyStore
import NotifyWire
import PostgresNIO

/// `loadgen fanout`: push jobs per second out of the fanout worker alone.
struct FanoutBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fanout",
        abstract: "Measure the fan-out worker alone: change events in, push jobs out.",
        discussion: """
            Seeds an app with --users x --devices APNs subscriptions straight into PostgreSQL, publishes \
            --events change events (kind created, visual content) to fanout.changes as fast as the broker \
            confirms them, and counts the push jobs fanout publishes to push.apns by consuming that queue \
            itself. Stop push-dispatch first (deploy/local/services.sh stop push-dispatch) so that this \
            command is push.apns's only consumer; start it again afterwards. Reports push jobs/s from the \
            first job to the last, and the whole run's time.

            With --preload the fanout worker must be stopped too: every change event is on fanout.changes \
            before it starts, so the worker does not share the machine with the publishing. Once they are, \
            the command says so (and creates --ready-file); start the worker then \
            (deploy/local/services.sh start fanout). CPU is counted from that point on.
            """
    )

    @Option(help: "RabbitMQ URL. (default: $NOTIFY_AMQP_URL, else the local stack's)")
    var amqpURL: String?
    @Option(help: "PostgreSQL URL of the writer role, for seeding. (default: $NOTIFY_WRITER_DATABASE_URL, else the local stack's)")
    var databaseURL: String?
    @Option(help: "Users to seed.")
    var users = 10_000
    @Option(help: "APNs devices per user.")
    var devices = 3
    @Option(help: "Change events to publish (at most 1,000,000).")
    var events = 100_000
    @Option(help: "Change events per AMQP message (as storage batches them).")
    var eventsPerMessage = 100
    @Flag(help: "Put every change event on fanout.changes before the fanout worker runs (stop it first, start it when told).")
    var preload = false
    @Option(help: "With --preload: a file to create once every change event is on the queue, for scripts that then start the worker.")
    var readyFile: String?
    @Option(help: "Seconds to wait for the last push job.")
    var timeout = 300
    @Option(help: "Directory for report.json and report.md. (default: .local/loadgen/fanout-<time>)")
    var output: String?
    @OptionGroup var stack: StackStateOption

    func validate() throws {
        guard (1...1_000_000).contains(events), users >= 1, devices >= 1, users * devices <= 1_000_000 else {
            throw ValidationError("--events at most 1,000,000 and --users x --devices at most 1,000,000")
        }
        if readyFile != nil && !preload {
            throw ValidationError("--ready-file needs --preload")
        }
    }

    func run() async throws {
        let amqp = try PreloadedStage.amqp(amqpURL)
        let logger = PreloadedStage.logger
        let appId = "loadgen_fanout_\(Int(Date().timeIntervalSince1970))"

        let database = try DatabaseURL.makeClient(PreloadedStage.writerDatabaseURL(databaseURL), maximumConnections: 2, logger: logger)
        let seeding = Task { await database.run() }
        let seedStarted = ContinuousClock.now
        try await seed(database, appId: appId, logger: logger)
        let devicesVersions = try await readDevicesVersions(database, appId: appId, logger: logger)
        seeding.cancel()
        FileHandle.standardError.write(Data("seeded \(users * devices) subscriptions in \(ContinuousClock.now - seedStarted)\n".utf8))

        // Jobs counted without decoding them: the consumer must not be the bottleneck.
        let counter = DeliveryCounter()
        let consuming = PreloadedStage.count(QueueNames.pushQueue(.apns), amqp: amqp, into: counter) { PushJobBatch.jobCount(wireBytes: $0) ?? 0 }

        var cpuBefore = ProcessCPU.snapshot(of: stack)
        var started = ContinuousClock.now
        try await publishEvents(amqp: amqp, appId: appId, devicesVersions: devicesVersions)
        let published = ContinuousClock.now - started
        FileHandle.standardError.write(Data("published \(events) change events in \(published)\n".utf8))
        if preload {
            guard await counter.count == 0 else { throw Self.workerRanDuringPreload }
            cpuBefore = ProcessCPU.snapshot(of: stack)
            started = ContinuousClock.now
            try PreloadedStage.signalReady(readyFile, start: "fanout")
        }
        let expected = events * devices
        let outcome = try await PreloadedStage.finish(counter, expected: expected, started: started, timeout: timeout, stack: stack, consuming: consuming) {
            ValidationError("only \($0) of \(expected) push jobs arrived within \(timeout) s (is push-dispatch stopped? is fanout running?)")
        }
        if preload && outcome.first < started { throw Self.workerRanDuringPreload }
        let jobs = outcome.units
        let report = BenchmarkReport(
            mode: "fanout", date: Date(),
            settings: [
                "users": "\(users)", "devices": "\(devices)", "events": "\(events)", "eventsPerMessage": "\(eventsPerMessage)",
                "preload": "\(preload)",
            ],
            figures: [
                .init(name: "push jobs out of fanout (first to last job)", value: outcome.rate, unit: "jobs/s"),
                .init(name: "change events in (publish with confirms)", value: Double(events) / max(published.inSeconds, 0.001), unit: "events/s"),
                .init(
                    name: preload ? "whole run, preloaded to last job (includes the worker's start)" : "whole run, first event published to last job",
                    value: outcome.total.inSeconds, unit: "s"),
                .init(name: "push jobs", value: Double(jobs), unit: ""),
            ],
            cpu: ProcessCPU.usage(from: cpuBefore, to: outcome.cpuAfter, units: jobs, unit: "push job"))
        try report.write(to: output ?? BenchmarkReport.defaultOutput("fanout"))
    }

    private static let workerRanDuringPreload = ValidationError(
        "push jobs arrived while the change events were preloading: stop the fanout worker before a --preload run (deploy/local/services.sh stop fanout)")

    /// The app and its users' subscriptions, straight into PostgreSQL (what storage would have written).
    private func seed(_ database: PostgresClient, appId: String, logger: Logger) async throws {
        let seeding = BenchmarkSeeding(client: database, logger: logger)
        try await seeding.app(appId, name: "loadgen fanout")
        let total = users * devices
        var start = 0
        while start < total {
            let end = min(start + 10_000, total)
            try await seeding.subscriptions(
                appId: appId, users: (start..<end).map { "user-\($0 / devices)" },
                tokens: (start..<end).map { _ in String(repeating: "0", count: 32) + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased() })
            start = end
        }
    }

    /// Each seeded user's devices version, as storage puts it into the user's change events.
    private func readDevicesVersions(_ database: PostgresClient, appId: String, logger: Logger) async throws -> [Int64] {
        let stored = try await BenchmarkSeeding(client: database, logger: logger).devicesVersions(appId: appId)
        return (0..<users).map { stored["user-\($0)"] ?? 0 }
    }

    private func publishEvents(amqp: AMQPConfiguration, appId: String, devicesVersions: [Int64]) async throws {
        let content = NotificationContent(
            appNotificationId: nil, groupName: nil, priority: .high, expirationDateTime: Date().addingTimeInterval(86400),
            displayTimeToLive: nil, platformTypes: nil,
            payload: NotificationPayload(visualContent: VisualContent(title: "Fan-out benchmark", body: "One change, one push per device")),
            push: nil)
        try await PreloadedStage.publish((events + eventsPerMessage - 1) / eventsPerMessage, to: QueueNames.fanoutChanges, amqp: amqp) { index in
            let batch = ChangeEventBatch(events: (index * eventsPerMessage..<min((index + 1) * eventsPerMessage, events)).map { number in
                ChangeEvent(
                    appId: appId, userId: "user-\(number % users)", sequence: Int64(number / users + 1), kind: .created,
                    notificationId: UUID(), content: content, readState: .unread, userActionState: .noInteraction,
                    originSubscriptionId: nil, badge: 1, changedAt: Date(), devicesVersion: devicesVersions[number % users])
            })
            return AMQPOutboundMessage(routingKey: QueueNames.fanoutChanges, wire: batch)
        }
    }
}
