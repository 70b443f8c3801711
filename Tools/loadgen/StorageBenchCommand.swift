import ArgumentParser
import Foundation
import NotifyAMQP
import NotifyDatabase
import NotifyModels
import NotifyRuntime
import NotifyStore
import NotifyWire

/// `loadgen storage`: notifications applied per second by storage and PostgreSQL alone, every command preloaded.
struct StorageBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storage",
        abstract: "Measure storage and PostgreSQL alone: publish commands in, change events out.",
        discussion: """
            Seeds an app straight into PostgreSQL, puts --notifications publish commands on storage.commands in \
            messages of --per-message (as ingest batches a request's notifications) with every storage instance \
            stopped, creates --ready-file, and counts the change events storage then publishes to fanout.changes by \
            consuming that queue itself (stop fanout first, so that this command is its only consumer; start it \
            again afterwards). Start storage once told (deploy/local/services.sh start storage). Reports \
            notifications applied per second (the first change event to the last), the whole run from the start \
            signal, and the CPU per notification of every process from the start signal on: what one PostgreSQL \
            cluster with its storage writer takes on this machine.
            """
    )

    @Option(help: "RabbitMQ URL. (default: $NOTIFY_AMQP_URL, else the local stack's)")
    var amqpURL: String?
    @Option(help: "PostgreSQL URL of the writer role, for seeding. (default: $NOTIFY_WRITER_DATABASE_URL, else the local stack's)")
    var databaseURL: String?
    @Option(help: "Users the notifications go to, round-robin.")
    var users = 1_000
    @Option(help: "Notifications to preload (at most 1,000,000).")
    var notifications = 100_000
    @Option(help: "Publish commands per AMQP message (a request's batch, at most 500).")
    var perMessage = 100
    @Option(help: "A file to create once every command is on storage.commands, for scripts that then start storage.")
    var readyFile: String?
    @Option(help: "Seconds to wait for the last change event.")
    var timeout = 600
    @Option(help: "Directory for report.json and report.md. (default: .local/loadgen/storage-<time>)")
    var output: String?
    @OptionGroup var stack: StackStateOption

    func validate() throws {
        guard (1...1_000_000).contains(notifications), users >= 1, (1...StorageCommandBatch.maximumCommands).contains(perMessage) else {
            throw ValidationError("--notifications 1 to 1,000,000, --users at least 1, --per-message 1 to \(StorageCommandBatch.maximumCommands)")
        }
    }

    func run() async throws {
        let amqp = try PreloadedStage.amqp(amqpURL)
        let logger = PreloadedStage.logger
        let appId = "loadgen_storage_\(Int(Date().timeIntervalSince1970))"
        let database = try DatabaseURL.makeClient(PreloadedStage.writerDatabaseURL(databaseURL), maximumConnections: 1, logger: logger)
        let seeding = Task { await database.run() }
        try await BenchmarkSeeding(client: database, logger: logger).app(appId, name: "loadgen storage")
        seeding.cancel()

        let counter = DeliveryCounter()
        let consuming = PreloadedStage.count(QueueNames.fanoutChanges, amqp: amqp, into: counter) { body in
            (try? ChangeEventBatch(wireBytes: body))?.events.count ?? 0
        }
        let publishStarted = ContinuousClock.now
        let content = NotificationContent(
            appNotificationId: nil, groupName: nil, priority: .high, expirationDateTime: Date().addingTimeInterval(86400),
            displayTimeToLive: nil, platformTypes: nil,
            payload: NotificationPayload(visualContent: VisualContent(title: "Storage benchmark", body: "One command, one stored notification")),
            push: nil)
        // The publish commands as ingest makes them of requests carrying --per-message notifications each.
        try await PreloadedStage.publish((notifications + perMessage - 1) / perMessage, to: QueueNames.storageCommands, amqp: amqp) { index in
            let batch = StorageCommandBatch(commands: (index * perMessage..<min((index + 1) * perMessage, notifications)).map { number in
                StorageCommand(action: .publishNotification(PublishedNotification(
                    appId: appId, userId: "user-\(number % users)", notificationId: UUID(), content: content, receivedAt: Date())))
            })
            return AMQPOutboundMessage(routingKey: QueueNames.storageCommands, wire: batch)
        }
        FileHandle.standardError.write(Data("preloaded \(notifications) publish commands in \(ContinuousClock.now - publishStarted)\n".utf8))
        guard await counter.count == 0 else { throw Self.storageRanDuringPreload }

        let cpuBefore = ProcessCPU.snapshot(of: stack)
        let started = ContinuousClock.now
        try PreloadedStage.signalReady(readyFile, start: "storage")
        let outcome = try await PreloadedStage.finish(
            counter, expected: notifications, started: started, timeout: timeout, stack: stack, consuming: consuming
        ) { ValidationError("only \($0) of \(notifications) change events arrived within \(timeout) s (is fanout stopped? is storage running?)") }
        if outcome.first < started { throw Self.storageRanDuringPreload }
        let report = BenchmarkReport(
            mode: "storage", date: Date(),
            settings: ["users": "\(users)", "notifications": "\(notifications)", "perMessage": "\(perMessage)"],
            figures: [
                .init(name: "notifications applied (first to last change event)", value: outcome.rate, unit: "notifications/s"),
                .init(name: "whole run, start signal to last change event (includes storage's start)", value: outcome.total.inSeconds, unit: "s"),
                .init(name: "notifications", value: Double(outcome.units), unit: ""),
            ],
            cpu: ProcessCPU.usage(from: cpuBefore, to: outcome.cpuAfter, units: outcome.units, unit: "notification"))
        try report.write(to: output ?? BenchmarkReport.defaultOutput("storage"))
    }

    private static let storageRanDuringPreload = ValidationError(
        "change events arrived while the commands were preloading: stop every storage instance before the run (deploy/local/services.sh stop storage)")
}
