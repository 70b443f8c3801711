import ArgumentParser
import Foundation
import Histogram
import Logging
import NotifyAMQP
import NotifyRuntime

/// `loadgen broker`: the broker's own ceiling on this machine, through the project's AMQP layer, with the
/// durability the pipeline uses (persistent messages, quorum queue, publisher confirms, manual acks).
struct BrokerCeilingCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "broker",
        abstract: "Measure RabbitMQ's ceiling with the pipeline's message size and durability.",
        discussion: """
            Four phases on the quorum queue loadgen.ceiling: publish --messages with confirms in batches of \
            --batch; consume them (prefetch 500, ack-multiple per batch); then publish and consume at the same \
            time. Reports messages/s for each, and the confirm latency of a batch. Last, the broker's cost of a \
            message when nothing batches it: --paced-rate messages a second for --paced-seconds, each published \
            alone and its confirm awaited, and consumed as it comes; reports RabbitMQ's CPU per message (read from \
            the stack's state directory), the floor of what one quorum-queue hop costs the broker at that rate.
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
    @Option(help: "Messages a second in the paced phase, each published and confirmed alone (0: no paced phase).")
    var pacedRate = 1000
    @Option(help: "Seconds of the paced phase (at most 120).")
    var pacedSeconds = 10
    @Option(help: "Directory for report.json and report.md. (default: .local/loadgen/broker-<time>)")
    var output: String?
    @OptionGroup var stack: StackStateOption

    func validate() throws {
        guard (1...1_000_000).contains(messages) else { throw ValidationError("--messages must be between 1 and 1,000,000.") }
        guard (1...1_000_000).contains(size), (1...5000).contains(batch) else { throw ValidationError("--size or --batch out of range.") }
        guard (0...10_000).contains(pacedRate) else { throw ValidationError("--paced-rate must be between 0 and 10,000.") }
        guard (1...120).contains(pacedSeconds) else { throw ValidationError("--paced-seconds must be between 1 and 120.") }
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

        // Paced: one message per publish call at its due time (late ones go at once, in order), consumed meanwhile.
        let paced = pacedRate * pacedSeconds
        var pacedConfirms = LatencyStats.histogram()
        var pacedUsage: ProcessCPU.Usage?
        var pacedElapsed = Duration.zero
        if paced > 0 {
            FileHandle.standardError.write(Data("publishing \(paced) messages one at a time at \(pacedRate)/s, consuming them...\n".utf8))
            let before = ProcessCPU.snapshot(of: stack)
            pacedElapsed = try await consume(paced) {
                let started = ContinuousClock.now
                for n in 0..<paced {
                    try? await Task.sleep(until: started + .seconds(Double(n) / Double(pacedRate)), clock: .continuous)
                    let sent = ContinuousClock.now
                    try await publisher.publish([message])
                    pacedConfirms.record(LatencyStats.microseconds(ContinuousClock.now - sent))
                }
            }
            pacedUsage = ProcessCPU.usage(from: before, to: ProcessCPU.snapshot(of: stack), units: paced, unit: "message")
        }
        await publisher.shutdown()

        func rate(_ duration: Duration) -> Double { Double(messages) / duration.inSeconds }
        let confirms = LatencyStats(confirmLatency)
        let report = BenchmarkReport(
            mode: "broker", date: Date(),
            settings: [
                "messages": "\(messages)", "size": "\(size)", "batch": "\(batch)", "queue": "quorum, persistent, confirms",
                "paced": "\(pacedRate)/s for \(pacedSeconds) s",
            ],
            figures: [
                .init(name: "publish with confirms", value: rate(publishOnly), unit: "msg/s"),
                .init(name: "consume (prefetch 500, ack-multiple)", value: rate(consumeOnly), unit: "msg/s"),
                .init(name: "publish and consume at once", value: rate(both), unit: "msg/s"),
                .init(name: "confirm wait per batch p50", value: confirms.p50, unit: "ms"),
                .init(name: "confirm wait per batch p99", value: confirms.p99, unit: "ms"),
            ] + pacedFigures(pacedConfirms, usage: pacedUsage, elapsed: pacedElapsed, count: paced))
        try report.write(to: output ?? BenchmarkReport.defaultOutput("broker"))
    }

    /// The paced phase's figures: the rate it kept, a confirm's wait, and RabbitMQ's CPU per message.
    private func pacedFigures(
        _ confirms: Histogram<UInt64>, usage: ProcessCPU.Usage?, elapsed: Duration, count: Int
    ) -> [BenchmarkReport.Figure] {
        guard let usage, count > 0 else { return [] }
        let latency = LatencyStats(confirms)
        var figures: [BenchmarkReport.Figure] = [
            .init(name: "paced: messages/s (each published and confirmed alone)", value: Double(count) / max(elapsed.inSeconds, 0.001), unit: "msg/s"),
            .init(name: "paced: confirm wait p50", value: latency.p50, unit: "ms"),
            .init(name: "paced: confirm wait p99", value: latency.p99, unit: "ms"),
        ]
        if let broker = usage.shares.first(where: { $0.process == "rabbitmq" }) {
            figures.append(.init(
                name: "paced: RabbitMQ CPU per message (published, confirmed, delivered, acked)", value: broker.microsecondsPerUnit, unit: "µs"))
        } else {
            FileHandle.standardError.write(Data("no RabbitMQ pid file under --state-dir \(stack.stateDir): the broker's CPU is not reported\n".utf8))
        }
        return figures
    }
}
