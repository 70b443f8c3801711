import ArgumentParser
import NotifyModels

/// `notifyctl dlq`: the dead-letter queues (`<queue>.dead`), through RabbitMQ's management API.
struct DeadLetterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dlq",
        abstract: "List, show, replay and purge the dead-letter queues (<queue>.dead) through RabbitMQ's management API.",
        discussion: """
            A message a service cannot handle goes to its queue's dead-letter queue with the reason in the header \
            x-notify-reason. The management API is --management-url (env NOTIFY_RABBITMQ_MANAGEMENT_URL, default \
            http://notify:notify@127.0.0.1:21673), as an administrator. With --json, list prints the management \
            API's objects of the dead-letter queues, and show the messages as the management API answered them.
            """,
        subcommands: [ListDeadLettersCommand.self, ShowDeadLettersCommand.self, ReplayDeadLettersCommand.self, PurgeDeadLettersCommand.self]
    )

    static let suffix = ".dead"

    /// The queue a dead-letter queue's messages were dead-lettered from: its name without `.dead`.
    static func sourceQueue(of deadLetterQueue: String) throws -> String {
        guard deadLetterQueue.hasSuffix(suffix), deadLetterQueue.count > suffix.count else {
            throw UsageError("\(deadLetterQueue) is not a dead-letter queue (<queue>.dead); `dlq list` lists them")
        }
        return String(deadLetterQueue.dropLast(suffix.count))
    }
}

/// Where RabbitMQ's management API is, for the dlq commands.
struct BrokerOptions: ParsableArguments {
    @Option(help: "RabbitMQ's management API with an administrator's credentials (env NOTIFY_RABBITMQ_MANAGEMENT_URL; default http://notify:notify@127.0.0.1:21673).")
    var managementURL: String?

    @Option(help: "The service's virtual host.")
    var vhost = "notify"

    func client() throws -> BrokerManagementClient {
        try BrokerManagementClient(
            url: managementURL ?? ServiceOptions.environment("NOTIFY_RABBITMQ_MANAGEMENT_URL") ?? "http://notify:notify@127.0.0.1:21673",
            virtualHost: vhost)
    }
}

/// `dlq list`: every dead-letter queue and its messages.
struct ListDeadLettersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List every queue whose name ends in .dead, with its message count (as the broker last sampled it, every few seconds)."
    )

    @OptionGroup var options: ServiceOptions
    @OptionGroup var broker: BrokerOptions

    func run() async throws {
        let queues = try await broker.client().queues().filter { $0.name.hasSuffix(DeadLetterCommand.suffix) }.sorted { $0.name < $1.name }
        if options.json {
            return Output.answer(try ServiceClient.encode(queues.map { JSONValue.object($0.object) }))
        }
        guard !queues.isEmpty else { return Output.line("no dead-letter queues in virtual host \(broker.vhost)") }
        var table = TextTable("QUEUE", "MESSAGES")
        for queue in queues { table.add(queue.name, queue.messages.map(String.init) ?? "-") }
        table.print()
    }
}

/// `dlq show`: the first messages of a dead-letter queue, decoded, left in the queue.
struct ShowDeadLettersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Print the first messages of a dead-letter queue, decoded, each with its x-notify-reason; they stay in the queue.",
        discussion: """
            Messages are fetched and returned to the queue (ackmode reject_requeue_true), in order. Each is decoded \
            as the message the queue it came from carries (x-notify-queue, else the name without .dead): storage \
            commands, change events, push jobs, push outcomes, webhook events and outcomes (protobuf or the older \
            JSON, by content type), an app server's publish body.
            """
    )

    @OptionGroup var options: ServiceOptions
    @OptionGroup var broker: BrokerOptions

    @Argument(help: "The dead-letter queue, e.g. push.apns.dead.")
    var queue: String

    @Option(help: "How many messages, from the head of the queue.")
    var count = 10

    func validate() throws {
        _ = try DeadLetterCommand.sourceQueue(of: queue)
        guard count > 0 else { throw UsageError("--count must be positive") }
    }

    func run() async throws {
        let source = try DeadLetterCommand.sourceQueue(of: queue)
        let (messages, answer) = try await broker.client().peek(queue, count: count)
        if options.json { return Output.answer(answer) }
        guard !messages.isEmpty else { return Output.line("\(queue) is empty") }
        for (index, message) in messages.enumerated() {
            let from = message.header("x-notify-queue") ?? source
            let reading = DeadLetterReader.read(message.body, contentType: message.contentType, from: from)
            Output.line("message \(index + 1) of \(queue)")
            var fields = FieldList()
            fields.add("reason", message.header("x-notify-reason") ?? message.header("x-first-death-reason").map { "(the broker's) \($0)" } ?? "-")
            fields.add("from", from)
            fields.add("messageId", message.messageId)
            fields.add("sender", message.header("x-notify-user-id"))
            fields.add("contentType", "\(message.contentType ?? "none") (\(message.body.count) bytes)")
            fields.add("type", reading.type)
            fields.print()
            Output.line(reading.text)
            Output.line("")
        }
    }
}

/// `dlq replay`: messages back to the queue they were dead-lettered from.
struct ReplayDeadLettersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Move the first messages of a dead-letter queue back to the queue they were dead-lettered from.",
        discussion: """
            One message at a time: it is published to <queue> (the name without .dead) through the default exchange \
            with its properties and headers, and once the broker confirmed that, taken out of the dead-letter queue. \
            A crash in between leaves a copy in both, which the services' idempotency makes harmless. If the head of \
            the dead-letter queue is not the message just published (another client took or returned messages), it is \
            put back at the end and the replay stops (exit 1). notify.ingest.dead is not replayed: it holds app servers' \
            messages that ingest refused, which the app server corrects and publishes again.
            """
    )

    @OptionGroup var options: ServiceOptions
    @OptionGroup var broker: BrokerOptions

    @Argument(help: "The dead-letter queue, e.g. storage.commands.dead.")
    var queue: String

    @Option(help: "How many messages at most, from the head of the queue.")
    var count = 100

    func validate() throws {
        guard try DeadLetterCommand.sourceQueue(of: queue) != QueueNames.ingestQueue else {
            throw UsageError("\(queue) holds messages ingest refused (4xx); they would be refused again: the app server publishes corrected ones")
        }
        guard count > 0 else { throw UsageError("--count must be positive") }
    }

    func run() async throws {
        let source = try DeadLetterCommand.sourceQueue(of: queue)
        let client = try broker.client()
        let messages = try await client.peek(queue, count: count).messages
        for (index, message) in messages.enumerated() {
            try await client.publish(message, toQueue: source)
            let head = try await client.take(queue, count: 1).first
            guard let head, head.isSameMessage(as: message) else {
                if let head { try await client.publish(head, toQueue: queue) }
                throw CommandFailure.refused(
                    "\(queue) changed while replaying: its head was not the message just published to \(source) (now in both); "
                        + "stopped after \(index) of \(messages.count)")
            }
            Output.line("replayed \(message.messageId ?? "message \(index + 1)") to \(source)")
        }
        Output.line("\(queue): \(messages.count) replayed to \(source)")
    }
}

/// `dlq purge`: deletes every message of a dead-letter queue.
struct PurgeDeadLettersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "purge", abstract: "Delete every message of a dead-letter queue (needs --yes).")

    @OptionGroup var options: ServiceOptions
    @OptionGroup var broker: BrokerOptions

    @Argument(help: "The dead-letter queue.")
    var queue: String

    @Flag(help: "Yes, delete the messages: they cannot be replayed afterwards.")
    var yes = false

    func validate() throws {
        _ = try DeadLetterCommand.sourceQueue(of: queue)
        guard yes else { throw UsageError("purging deletes \(queue)'s messages for good: add --yes") }
    }

    func run() async throws {
        try await broker.client().purge(queue)
        Output.line("purged \(queue)")
    }
}
