import Foundation
import Logging
import NotifyAMQP
import NotifyModels

/// What `loadgen fanout` and `loadgen storage` share: one stage of the pipeline fed from a queue preloaded while the
/// stage is stopped, its output counted by consuming the next queue in the stage's place.
enum PreloadedStage {
    /// The broker: the option's URL, else $NOTIFY_AMQP_URL, else the local stack's.
    static func amqp(_ url: String?) throws -> AMQPConfiguration {
        try AMQPConfiguration(url: url ?? ProcessInfo.processInfo.environment["NOTIFY_AMQP_URL"] ?? "amqp://notify:notify@127.0.0.1:21672/notify")
    }

    /// The writer's database URL: the option's, else $NOTIFY_WRITER_DATABASE_URL, else the local stack's.
    static func writerDatabaseURL(_ url: String?) -> String {
        url ?? ProcessInfo.processInfo.environment["NOTIFY_WRITER_DATABASE_URL"] ?? "postgres://notify_writer:notify_writer@127.0.0.1:21432/notify"
    }

    static let logger: Logger = {
        var logger = Logger(label: "loadgen")
        logger.logLevel = .warning
        return logger
    }()

    /// Consumes `queue` until cancelled, adding what `units` counts in each message's body to `counter`.
    static func count(
        _ queue: String, amqp: AMQPConfiguration, into counter: DeliveryCounter, units: @escaping @Sendable (Data) -> Int
    ) -> Task<Void, any Error> {
        let consumer = AMQPConsumer(
            configuration: amqp, queue: queue, topology: .workQueue(queue), options: .init(prefetch: 200, maximumBatch: 200), logger: logger
        ) { deliveries in
            await counter.add(deliveries.reduce(0) { $0 + units($1.body) })
            return deliveries.map { _ in .ack }
        }
        return Task { try await consumer.run() }
    }

    /// Publishes `count` messages to `queue`, `message(i)` the i-th, 50 at a time with the broker's confirms.
    static func publish(_ count: Int, to queue: String, amqp: AMQPConfiguration, message: (Int) -> AMQPOutboundMessage) async throws {
        let publisher = AMQPPublisher(configuration: amqp, topology: .workQueue(queue), logger: logger)
        publisher.startIfNeeded()
        guard await publisher.waitUntilConnected(timeout: .seconds(10)) else { throw LoadGenError("cannot connect to the broker") }
        var messages: [AMQPOutboundMessage] = []
        for index in 0..<count {
            messages.append(message(index))
            if messages.count == 50 {
                try await publisher.publish(messages)
                messages = []
            }
        }
        try await publisher.publish(messages)
        await publisher.shutdown()
    }

    /// What the stage did from `started` until the counter reached what was expected.
    struct Outcome {
        let units: Int
        /// The first and the last unit counted.
        let first: ContinuousClock.Instant
        let last: ContinuousClock.Instant
        /// From `started` to the moment the counter reached what was expected.
        let total: Duration
        let cpuAfter: ProcessCPU.Snapshot

        /// Units a second from the first to the last.
        var rate: Double { Double(units) / max((last - first).inSeconds, 0.001) }
    }

    /// Waits until `counter` reaches `expected` (at most `timeout`), reads the stack's CPU, stops `consuming`, and
    /// throws `missing` (given the count) when the count fell short.
    static func finish(
        _ counter: DeliveryCounter, expected: Int, started: ContinuousClock.Instant, timeout: Int, stack: StackStateOption,
        consuming: Task<Void, any Error>, missing: (Int) -> any Error
    ) async throws -> Outcome {
        let reached = await counter.wait(for: expected, timeout: .seconds(timeout))
        let total = ContinuousClock.now - started
        let cpuAfter = ProcessCPU.snapshot(of: stack)
        consuming.cancel()
        _ = try? await consuming.value
        let units = await counter.count
        guard reached, let first = await counter.first, let last = await counter.last else { throw missing(units) }
        return Outcome(units: units, first: first, last: last, total: total, cpuAfter: cpuAfter)
    }

    /// Creates `readyFile` (if any) and says to start `service` now.
    static func signalReady(_ readyFile: String?, start service: String) throws {
        if let readyFile, !FileManager.default.createFile(atPath: readyFile, contents: Data()) {
            throw LoadGenError("cannot create --ready-file \(readyFile)")
        }
        FileHandle.standardError.write(Data("preloaded; start \(service) now (deploy/local/services.sh start \(service))\n".utf8))
    }
}
