import ArgumentParser
import Foundation
import Logging
import NotifyAMQP

/// `loadgen broker`: the broker's own ceiling on this machine, through the project's AMQP layer, with the
/// durability the pipeline uses (persistent messages, quorum queue, publisher confirms, manual acks).
struct BrokerCeilingCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "broker",
        abstract: "Measure RabbitMQ's ceiling with the pipeline's message size and durability.",
        discussion: """
            Three phases on the quorum queue loadgen.ceiling: publish --messages with confirms in batches of \
            --batch; consume them (prefetch 500, ack-multiple per batch); then publish and consume at the same \
            time. Reports messages/s for each, and the confirm latency of a batch.
            """
    )

    @Option(help: "RabbitMQ URL. (default: $NOTIFY_AMQP_URL, else the local stack's)")
    var amqpURL: String?
    @Option(help: "Messages per phase (at most 1,000,000).")
    var messages = 100_000
    @Option(help: "Message size in bytes.")
    var size = 300
    @Option(help: "Messages per publish call (one confirm wait).")
    var batch = 500
    @Option(help: "Directory for report.json and report.md. (default: .local/loadgen/broker-<time>)")
    var output: String?

    func validate() throws {
        guard (1...1_000_000).contains(messages) else { throw ValidationError("--messages must be between 1 and 1,000,000.") }
        guard (1...1_000_000).contains(size), (1...5000).contains(batch) else { throw ValidationError("--size or --batch out of range.") }
    }

    func run() async throws {
        let url = amqpURL ?? ProcessInfo.processInfo.environment["NOTIFY_AMQP_URL"] ?? "amqp://notify:notify@127.0.0.1:21672/notify"
        let configuration = try AMQPConfiguration(url: url)
        guard configuration.endpoints.allSatisfy({ ["127.0.0.1", "localhost", "::1"].contains($0.host) }) else { throw ValidationError("loopback brokers only") }
        var logger = Logger(label: "loadgen")
        logger.logLevel = .warning
        let queue = "loadgen.ceiling"
        let topology = AMQPTopology.workQueue(queue)
        let publisher = AMQPPublisher(configuration: configuration, topology: topology, logger: logger)
        publisher.startIfNeeded()
        guard await publisher.waitUntilConnected(timeout: .seconds(10)) else { throw ValidationError("cannot connect to \(configuration.endpoints.map(\.description).joined(separator: ", "))") }
        let body = Data(repeating: UInt8(ascii: "x"), count: size)
        let message = AMQPOutboundMessage(routingKey: queue, body: body)
        var confirmLatency = LatencyStats.histogram()

        func publishAll() async throws -> Duration {
            let started = ContinuousClock.now
            var sent = 0
            while sent < messages {
                let count = min(batch, messages - sent)
                let batchStarted = ContinuousClock.now
                try await publisher.publish(Array(repeating: message, count: count))
                confirmLatency.record(LatencyStats.microseconds(ContinuousClock.now - batchStarted))
                sent += count
            }
            return ContinuousClock.now - started
        }

        func consume(_ target: Int, while work: () async throws -> Void) async throws -> Duration {
            let counter = DeliveryCounter()
            let consumer = AMQPConsumer(
                configuration: configuration, queue: queue, topology: topology, options: .init(prefetch: 500, maximumBatch: 500),
                logger: logger
            ) { deliveries in
                await counter.add(deliveries.count)
                return deliveries.map { _ in .ack }
            }
            let running = Task { try await consumer.run() }
            let started = ContinuousClock.now
            try await work()
            let reached = await counter.wait(for: target, timeout: .seconds(300))
            let elapsed = ContinuousClock.now - started
            running.cancel()
            _ = try? await running.value
            guard reached else { throw ValidationError("consumed only \(await counter.count) of \(target) within 300 s") }
            return elapsed
        }

        FileHandle.standardError.write(Data("publishing \(messages) messages of \(size) bytes...\n".utf8))
        let publishOnly = try await publishAll()
        FileHandle.standardError.write(Data("consuming them...\n".utf8))
        let consumeOnly = try await consume(messages) {}
        FileHandle.standardError.write(Data("publishing and consuming at once...\n".utf8))
        let both = try await consume(messages) { _ = try await publishAll() }
        await publisher.shutdown()

        func rate(_ duration: Duration) -> Double {
            Double(messages) / (Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
        }
        let confirms = LatencyStats(confirmLatency)
        let report = BenchmarkReport(
            mode: "broker", date: Date(),
            settings: ["messages": "\(messages)", "size": "\(size)", "batch": "\(batch)", "queue": "quorum, persistent, confirms"],
            figures: [
                .init(name: "publish with confirms", value: rate(publishOnly), unit: "msg/s"),
                .init(name: "consume (prefetch 500, ack-multiple)", value: rate(consumeOnly), unit: "msg/s"),
                .init(name: "publish and consume at once", value: rate(both), unit: "msg/s"),
                .init(name: "confirm wait per batch p50", value: confirms.p50, unit: "ms"),
                .init(name: "confirm wait per batch p99", value: confirms.p99, unit: "ms"),
            ])
        try report.write(to: output ?? BenchmarkReport.defaultOutput("broker"))
    }
}
