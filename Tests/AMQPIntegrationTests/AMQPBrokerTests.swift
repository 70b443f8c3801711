import Foundation
import Metrics
import MetricsTestKit
import NotifyAMQP
import NotifyTestSupport
import ServiceLifecycle
import Synchronization
import Testing

/// Tests against the real RabbitMQ (`NOTIFY_AMQP_URL`, by default the local node of
/// `deploy/local/rabbitmq.sh`, which is started if needed; the restart test starts a private node).
/// Serialized: the memory test measures the whole process, and the timed waits are steadier one at a time.
/// Every queue is unique to its test and deleted afterwards.
@Suite("AMQP against a real RabbitMQ", .serialized, .enabled(if: ProcessInfo.processInfo.environment["NOTIFY_TEST_STACK"] != nil, "needs the running stack: run deploy/local/test.sh"))
struct AMQPBrokerTests {
    init() async throws {
        try await TestBroker.ensureStarted()
    }
}

// MARK: Publishing with confirms and consuming

extension AMQPBrokerTests {
    @Test("1,000 confirmed messages are each consumed exactly once and the queue is empty afterwards", .timeLimit(.minutes(2)))
    func publishAndConsumeExactlyOnce() async throws {
        let queue = TestBroker.uniqueQueueName("confirms")
        let topology = AMQPTopology.workQueue(queue)
        let expected = (0..<1000).map { "message-\($0)" }
        try await withQueues([queue, "\(queue).dead"]) {
            try await withPublisher(try TestBroker.configuration(), logger: TestBroker.logger, topology: topology) { publisher in
                #expect(Self.threadNames().contains("amqp-out"), "the publisher's thread is named")
                // Half one confirmed batch after the other, half as concurrent batches sharing the channel.
                try await publish(Array(expected[0..<500]), to: queue, with: publisher, batchSize: 100)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for start in stride(from: 500, to: 1000, by: 100) {
                        group.addTask { try await publish(Array(expected[start..<start + 100]), to: queue, with: publisher, batchSize: 100) }
                    }
                    try await group.waitForAll()
                }
            }

            let log = DeliveryLog()
            let consumer = try makeConsumer(queue: queue, topology: topology, options: .init(prefetch: 200, maximumBatch: 200), log: log)
            try await withServices([consumer], logger: TestBroker.logger) {
                #expect(await eventually(.seconds(30)) { log.count >= expected.count }, "only \(log.count) of \(expected.count) arrived")
                #expect(Self.threadNames().contains(String("amqp-in:\(queue)".prefix(15))), "the consumer's thread is named after its queue")
                // Anything delivered a second time would show up now.
                try await Task.sleep(for: .milliseconds(500))
            }

            let bodies = log.bodies
            #expect(bodies.count == expected.count)
            #expect(Set(bodies) == Set(expected))
            #expect(duplicates(bodies).isEmpty)
            #expect(log.entries.allSatisfy { !$0.redelivered })
            #expect(log.batches.allSatisfy { $0.count <= 200 }, "batches: \(log.batches.map(\.count))")
            // One consumer of a quorum queue sees the sequentially published half in order.
            let sequential = bodies.filter { Int($0.dropFirst("message-".count))! < 500 }
            #expect(sequential == Array(expected[0..<500]))
            if let first = log.entries.first {
                #expect(first.properties.persistent)
                #expect(first.properties.messageId != nil, "the publisher assigns a message id")
                #expect(first.properties.contentType == "application/json")
                #expect(first.exchange == "")
                #expect(first.routingKey == queue)
            }

            let leftovers = try await drain(queue, topology: topology, for: .seconds(1))
            #expect(leftovers.isEmpty, "a fresh consumer got \(leftovers.count) messages")
            #expect(try await TestBroker.waitForMessageCount(queue, 0) == 0)
        }
    }
}

extension AMQPBrokerTests {
    /// The names the OS shows for this process's threads (`/proc/self/task/*/comm`).
    static func threadNames() -> Set<String> {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return Set(tasks.compactMap { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        })
    }
}

// MARK: Batches that overlap in order

extension AMQPBrokerTests {
    /// How many handlers run at once, and the most there ever were.
    final class Overlap: Sendable {
        private let state = Mutex<(running: Int, most: Int)>((0, 0))
        func begin() { state.withLock { $0.running += 1; $0.most = max($0.most, $0.running) } }
        func end() { state.withLock { $0.running -= 1 } }
        var most: Int { state.withLock { $0.most } }
    }

    @Test(
        "in order, two batches overlap yet their ordered parts run in delivery order; every message is acked once, and a lone message is not held back",
        .timeLimit(.minutes(2)))
    func inOrderBatchesOverlap() async throws {
        let queue = TestBroker.uniqueQueueName("in-order")
        let topology = AMQPTopology.workQueue(queue)
        let expected = (0..<2000).map { String(format: "message-%04d", $0) }
        try await withQueues([queue, "\(queue).dead"]) {
            try await withPublisher(try TestBroker.configuration(), logger: TestBroker.logger, topology: topology) { publisher in
                try await publish(expected, to: queue, with: publisher, batchSize: 200)
                let log = DeliveryLog()
                let overlap = Overlap()
                let consumer = AMQPConsumer(
                    configuration: try TestBroker.configuration(), queue: queue, topology: topology,
                    options: .init(prefetch: 200, maximumBatch: 100, concurrentBatches: 2, inOrder: true), logger: TestBroker.logger
                ) { batch, order in
                    overlap.begin()
                    // The part that may overlap: what fanout does before it publishes.
                    try? await Task.sleep(for: .milliseconds(5))
                    await order.waitForPreviousBatch()
                    log.record(batch)
                    overlap.end()
                    return batch.map { _ in .ack }
                }
                try await withServices([consumer], logger: TestBroker.logger) {
                    #expect(await eventually(.seconds(60)) { log.count >= expected.count }, "only \(log.count) of \(expected.count) arrived")
                    #expect(log.bodies == expected, "the ordered parts saw the messages out of order")
                    #expect(overlap.most == 2, "at most two batches at once, and two did overlap: \(overlap.most)")
                    #expect(log.batches.allSatisfy { $0.count <= 100 }, "batches: \(log.batches.map(\.count))")

                    try await publish(["alone"], to: queue, with: publisher)
                    #expect(await eventually(.seconds(10)) { log.bodies.last == "alone" }, "a lone message waited for a full batch")
                    try await Task.sleep(for: .milliseconds(500))
                }
                #expect(log.entries.allSatisfy { !$0.redelivered }, "a message came twice: an ack went missing or was repeated")
                #expect(log.count == expected.count + 1)
            }
            let leftovers = try await drain(queue, topology: topology, for: .seconds(1))
            #expect(leftovers.isEmpty, "\(leftovers.count) messages were never acked")
        }
    }
}

// MARK: Unroutable messages and a missing exchange

extension AMQPBrokerTests {
    /// A direct exchange that no queue is ever bound to (fixed name: exchanges are not cleaned up).
    static let unboundExchange = "test.amqp.unbound"

    @Test("a mandatory message that reaches no queue throws .unroutable", .timeLimit(.minutes(1)))
    func unroutable() async throws {
        let queue = TestBroker.uniqueQueueName("unroutable")
        let topology = AMQPTopology(exchanges: [.init(name: Self.unboundExchange, type: "direct")]).merging(.workQueue(queue))
        try await withQueues([queue, "\(queue).dead"]) {
            try await withPublisher(try TestBroker.configuration(), logger: TestBroker.logger, topology: topology) { publisher in
                let toUnbound = AMQPOutboundMessage(exchange: Self.unboundExchange, routingKey: "nobody", body: Data("lost".utf8))
                let error = await #expect(throws: AMQPError.self) {
                    try await withTimeout(.seconds(10), "publishing to an unbound exchange") { try await publisher.publish(toUnbound) }
                }
                #expect(error?.code == .unroutable, "got \(String(describing: error))")

                let toNoQueue = AMQPOutboundMessage(routingKey: "test.amqp.no-such-queue.\(UUID().uuidString)", body: Data("lost".utf8))
                let noQueueError = await #expect(throws: AMQPError.self) {
                    try await withTimeout(.seconds(10), "publishing to a queue that does not exist") { try await publisher.publish(toNoQueue) }
                }
                #expect(noQueueError?.code == .unroutable, "got \(String(describing: noQueueError))")

                // One unroutable message fails the whole call; the routable ones of the batch are stored.
                let mixed = [
                    AMQPOutboundMessage(routingKey: queue, body: Data("routable-1".utf8)),
                    toUnbound,
                    AMQPOutboundMessage(routingKey: queue, body: Data("routable-2".utf8)),
                ]
                let mixedError = await #expect(throws: AMQPError.self) {
                    try await withTimeout(.seconds(10), "publishing a batch with one unroutable message") { try await publisher.publish(mixed) }
                }
                #expect(mixedError?.code == .unroutable, "got \(String(describing: mixedError))")

                // A returned message does not hurt the channel.
                #expect(publisher.isConnected)
                try await publish(["after-unroutable"], to: queue, with: publisher)
            }
            let arrived = try await drain(queue, topology: topology, for: .seconds(1)).map(\.body)
            #expect(arrived.sorted() == ["after-unroutable", "routable-1", "routable-2"])
        }
    }

    @Test("publishing to a missing exchange fails, and the publisher recovers by itself", .timeLimit(.minutes(1)))
    func missingExchange() async throws {
        let queue = TestBroker.uniqueQueueName("missing-exchange")
        let topology = AMQPTopology.workQueue(queue)
        try await withQueues([queue, "\(queue).dead"]) {
            try await withPublisher(try TestBroker.configuration(), logger: TestBroker.logger, topology: topology) { publisher in
                try await publish(["before"], to: queue, with: publisher)
                let missing = AMQPOutboundMessage(exchange: "test.amqp.missing.\(UUID().uuidString)", routingKey: queue, body: Data("lost".utf8))
                let error = await #expect(throws: AMQPError.self) {
                    try await withTimeout(.seconds(10), "publishing to a missing exchange") { try await publisher.publish(missing) }
                }
                // The broker closes the channel (404 NOT_FOUND); the publisher reconnects.
                #expect(error.map { [.channelClosed, .connectionLost, .notConnected].contains($0.code) } == true, "got \(String(describing: error))")
                #expect(error?.isTransient == true)
                #expect(await publisher.waitUntilConnected(timeout: .seconds(15)), "the publisher did not reconnect")
                try await publish(["after-recovery-1", "after-recovery-2"], to: queue, with: publisher)
            }
            let arrived = try await drain(queue, topology: topology, for: .seconds(1)).map(\.body)
            #expect(arrived == ["before", "after-recovery-1", "after-recovery-2"])
        }
    }
}

extension AMQPBrokerTests {
    /// The design publishes with the app's own message_id, so two calls in flight may carry the same id.
    /// A basic.return names only the message id: the unroutable message must not be reported as stored.
    @Test("an unroutable message fails even when a routable one with the same message id is in flight", .timeLimit(.minutes(1)))
    func unroutableWithDuplicateMessageId() async throws {
        let queue = TestBroker.uniqueQueueName("duplicate-id")
        let topology = AMQPTopology(exchanges: [.init(name: Self.unboundExchange, type: "direct")]).merging(.workQueue(queue))
        try await withQueues([queue, "\(queue).dead"]) {
            try await withPublisher(try TestBroker.configuration(), logger: TestBroker.logger, topology: topology) { publisher in
                for round in 0..<5 {
                    let id = "duplicate-\(round)-\(UUID().uuidString)"
                    // A large routable call whose last message carries the id: its confirms take a while.
                    let routable = (0..<200).map { index in
                        AMQPOutboundMessage(
                            routingKey: queue, body: Data("routable-\(round)-\(index)".utf8),
                            properties: AMQPProperties(messageId: index == 199 ? id : nil))
                    }
                    let first = Task { try await publisher.publish(routable) }
                    try await Task.sleep(for: .milliseconds(2))
                    let lost = AMQPOutboundMessage(
                        exchange: Self.unboundExchange, routingKey: "nobody", body: Data("lost".utf8), properties: AMQPProperties(messageId: id))
                    let error = await #expect(throws: AMQPError.self, "round \(round): the unroutable message was reported as published") {
                        try await withTimeout(.seconds(10), "publishing the unroutable message") { try await publisher.publish(lost) }
                    }
                    #expect(error == nil || error?.code == .unroutable, "round \(round): \(String(describing: error))")
                    // The routable call may fail too (the return cannot be told apart), but it must end.
                    _ = try? await withTimeout(.seconds(10), "publishing the routable batch") { try await first.value }
                }
            }
        }
    }

    /// A routing key longer than an AMQP short string (255 bytes) cannot be encoded, so sending fails on
    /// the client before the broker sees it. The call must fail, not wait forever, and neither may the
    /// calls queued behind it.
    @Test("a message the client cannot send fails the call instead of hanging it", .timeLimit(.minutes(1)))
    func unsendableMessage() async throws {
        let queue = TestBroker.uniqueQueueName("unsendable")
        let topology = AMQPTopology.workQueue(queue)
        try await withQueues([queue, "\(queue).dead"]) {
            try await withPublisher(try TestBroker.configuration(), logger: TestBroker.logger, topology: topology) { publisher in
                let unsendable = AMQPOutboundMessage(routingKey: String(repeating: "k", count: 300), body: Data("x".utf8))
                let error = await #expect(throws: AMQPError.self) {
                    try await withTimeout(.seconds(10), "publishing a message with a 300-byte routing key") {
                        try await publisher.publish([AMQPOutboundMessage(routingKey: queue, body: Data("lost-or-stored".utf8)), unsendable])
                    }
                }
                #expect(error != nil, "the call did not fail with an AMQPError (a TimeoutError means it hung)")
                #expect(await publisher.waitUntilConnected(timeout: .seconds(15)))
                try await publish(["after"], to: queue, with: publisher)
            }
            let arrived = try await drain(queue, topology: topology, for: .seconds(1)).map(\.body)
            #expect(arrived.last == "after", "\(arrived)")
        }
    }
}

extension AMQPBrokerTests {
    /// A policy limits the queue to 5 messages and refuses more (`reject-publish`): the broker nacks.
    @Test("a message the broker refuses (queue full, reject-publish) throws .nacked", .timeLimit(.minutes(1)))
    func nacked() async throws {
        let queue = TestBroker.uniqueQueueName("nack")
        let policy = "test-nack-\(queue)"
        let topology = AMQPTopology.workQueue(queue)
        try await TestBroker.ctl([
            "-q", "set_policy", "-p", TestBroker.virtualHost, "--apply-to", "queues", policy,
            "^\(NSRegularExpression.escapedPattern(for: queue))$", #"{"max-length":5,"overflow":"reject-publish"}"#,
        ])
        try await withQueues([queue, "\(queue).dead", "policy:\(policy)"]) {
            try await withPublisher(try TestBroker.configuration(), logger: TestBroker.logger, topology: topology) { publisher in
                // A quorum queue enforces the limit asynchronously: it may take a few more before refusing.
                var confirmed: [String] = []
                var refused: [String] = []
                for index in 0..<40 {
                    let body = "single-\(index)"
                    do {
                        try await withTimeout(.seconds(10), "publishing \(body)") {
                            try await publisher.publish(AMQPOutboundMessage(routingKey: queue, body: Data(body.utf8)))
                        }
                        confirmed.append(body)
                    } catch let error as AMQPError where error.code == .nacked {
                        refused.append(body)
                    }
                }
                #expect(refused.count > 20, "refused: \(refused.count), confirmed: \(confirmed.count)")

                // Once the queue refuses, a whole batch is refused.
                let batch = (0..<10).map { AMQPOutboundMessage(routingKey: queue, body: Data("batch-\($0)".utf8)) }
                let error = await #expect(throws: AMQPError.self) {
                    try await withTimeout(.seconds(10), "publishing a batch to a full queue") { try await publisher.publish(batch) }
                }
                #expect(error?.code == .nacked, "got \(String(describing: error))")
                // A nack leaves the channel usable.
                #expect(publisher.isConnected)

                // Exactly the confirmed messages were stored.
                let arrived = try await drain(queue, topology: topology, for: .seconds(1)).map(\.body)
                #expect(arrived == confirmed, "confirmed \(confirmed), stored \(arrived)")
                try await publish(["after-drain"], to: queue, with: publisher)
            }
            let arrived = try await drain(queue, topology: topology, for: .seconds(1)).map(\.body)
            #expect(arrived == ["after-drain"])
        }
    }
}

// MARK: Dead-lettering

extension AMQPBrokerTests {
    @Test(
        "a .deadLetter answer moves the message to <queue>.dead",
        .timeLimit(.minutes(1)),
        arguments: [true, false]
    )
    func deadLetter(withPublisher useDeadLetterPublisher: Bool) async throws {
        let queue = TestBroker.uniqueQueueName(useDeadLetterPublisher ? "dead-republished" : "dead-rejected")
        let deadQueue = "\(queue).dead"
        let topology = AMQPTopology.workQueue(queue)
        try await withQueues([queue, deadQueue]) {
            let mainLog = DeliveryLog()
            let deadLog = DeliveryLog()
            try await withPublisher(try TestBroker.configuration(), logger: TestBroker.logger, topology: topology) { publisher in
                let messages = (0..<3).map {
                    AMQPOutboundMessage(
                        routingKey: queue, body: Data("{bad json \($0)".utf8),
                        properties: AMQPProperties(messageId: "id-\($0)", correlationId: "corr-\($0)", headers: ["x-test": "kept"]))
                }
                try await withTimeout(.seconds(10), "publishing") { try await publisher.publish(messages) }

                let consumer = try makeConsumer(
                    queue: queue, topology: topology, deadLetterPublisher: useDeadLetterPublisher ? publisher : nil, log: mainLog
                ) { _ in .deadLetter(reason: "bad json") }
                let deadConsumer = try makeConsumer(queue: deadQueue, topology: topology, log: deadLog)
                try await withServices([consumer, deadConsumer], logger: TestBroker.logger) {
                    #expect(await eventually(.seconds(20)) { deadLog.count >= 3 }, "only \(deadLog.count) of 3 reached \(deadQueue)")
                    try await Task.sleep(for: .milliseconds(500))
                }
            }

            #expect(mainLog.count == 3, "each message is handled once: \(mainLog.bodies)")
            #expect(deadLog.count == 3)
            #expect(Set(deadLog.bodies) == Set((0..<3).map { "{bad json \($0)" }))
            for entry in deadLog.entries {
                #expect(entry.exchange == AMQPTopology.deadLetterExchange)
                #expect(entry.routingKey == deadQueue)
                #expect(entry.properties.headers["x-test"] == "kept")
                #expect(entry.properties.messageId?.hasPrefix("id-") == true)
                #expect(entry.properties.correlationId?.hasPrefix("corr-") == true)
                #expect(entry.properties.persistent)
                if useDeadLetterPublisher {
                    #expect(entry.properties.headers["x-notify-reason"] == "bad json")
                    #expect(entry.properties.headers["x-notify-queue"] == .string(queue))
                    #expect(entry.properties.headers["x-notify-routing-key"] == .string(queue))
                } else {
                    // The broker's own dead-lettering (x-dead-letter-exchange) routed it.
                    #expect(entry.properties.headers["x-notify-reason"] == nil)
                    #expect(entry.properties.headers["x-first-death-reason"] == "rejected")
                    #expect(entry.properties.headers["x-first-death-queue"] == .string(queue))
                }
            }
            let leftovers = try await drain(queue, topology: topology, for: .seconds(1))
            #expect(leftovers.isEmpty, "\(leftovers.count) messages stayed in \(queue)")
        }
    }
}

// MARK: Requeueing and mixed batches

extension AMQPBrokerTests {
    @Test(".requeue delivers the message again, flagged redelivered", .timeLimit(.minutes(1)))
    func requeue() async throws {
        let queue = TestBroker.uniqueQueueName("requeue")
        let topology = AMQPTopology.workQueue(queue)
        let bodies = ["r-0", "r-1", "r-2"]
        try await withQueues([queue, "\(queue).dead"]) {
            try await withPublisher(try TestBroker.configuration(), logger: TestBroker.logger, topology: topology) { publisher in
                try await publish(bodies, to: queue, with: publisher)
            }
            let log = DeliveryLog()
            let consumer = try makeConsumer(queue: queue, topology: topology, log: log) { $0.redelivered ? .ack : .requeue }
            try await withServices([consumer], logger: TestBroker.logger) {
                #expect(await eventually(.seconds(20)) { log.count >= 6 }, "got \(log.bodies)")
                try await Task.sleep(for: .milliseconds(500))
            }
            let entries = log.entries
            #expect(entries.count == 6)
            for body in bodies {
                let deliveries = entries.filter { $0.body == body }
                #expect(deliveries.map(\.redelivered) == [false, true], "\(body): \(deliveries.map(\.redelivered))")
            }
            let leftovers = try await drain(queue, topology: topology, for: .seconds(1))
            #expect(leftovers.isEmpty)
        }
    }

    /// Holds the handler until the test releases it.
    final class Gate: Sendable {
        private let state = Mutex<(entered: Bool, released: Bool)>((false, false))
        var entered: Bool { state.withLock { $0.entered } }
        func release() { state.withLock { $0.released = true } }
        func pass() async {
            state.withLock { $0.entered = true }
            _ = await eventually(.seconds(10)) { self.state.withLock { $0.released } }
        }
    }

    @Test(
        "one batch with acks, a dead-letter and a requeue settles each message correctly without a channel error",
        .timeLimit(.minutes(1)),
        arguments: [false, true]
    )
    func mixedBatch(withDeadLetterPublisher useDeadLetterPublisher: Bool) async throws {
        let queue = TestBroker.uniqueQueueName("mixed")
        let deadQueue = "\(queue).dead"
        let topology = AMQPTopology.workQueue(queue)
        let batch = ["ack-0", "ack-1", "dead-2", "ack-3", "requeue-4", "ack-5", "ack-6"]
        try await withQueues([queue, deadQueue]) {
            let log = DeliveryLog()
            let deadLog = DeliveryLog()
            let gate = Gate()
            let stayedConnected = try await withPublisher(try TestBroker.configuration(), logger: TestBroker.logger, topology: topology) { publisher in
                let consumer = AMQPConsumer(
                    configuration: try TestBroker.configuration(), queue: queue, topology: topology,
                    options: .init(prefetch: 50, maximumBatch: 50),
                    deadLetterPublisher: useDeadLetterPublisher ? publisher : nil, logger: TestBroker.logger
                ) { deliveries in
                    log.record(deliveries)
                    if deliveries.contains(where: { String(decoding: $0.body, as: UTF8.self) == "gate" }) { await gate.pass() }
                    return deliveries.map { delivery in
                        let body = String(decoding: delivery.body, as: UTF8.self)
                        if body.hasPrefix("dead") { return .deadLetter(reason: "poison") }
                        if body.hasPrefix("requeue") && !delivery.redelivered { return .requeue }
                        return .ack
                    }
                }
                let deadConsumer = try makeConsumer(queue: deadQueue, topology: topology, log: deadLog)
                return try await withServices([consumer, deadConsumer], logger: TestBroker.logger) {
                    // While the handler holds the "gate" message, the whole batch arrives in the buffer,
                    // so the next call gets all seven at once.
                    try await publish(["gate"], to: queue, with: publisher)
                    #expect(await eventually(.seconds(10)) { gate.entered })
                    try await publish(batch, to: queue, with: publisher)
                    try await Task.sleep(for: .milliseconds(300))
                    gate.release()
                    #expect(await eventually(.seconds(20)) { log.count >= 9 && deadLog.count >= 1 }, "main: \(log.bodies), dead: \(deadLog.bodies)")
                    try await Task.sleep(for: .milliseconds(700))
                    return consumer.isConnected
                }
            }

            #expect(stayedConnected, "the consumer lost its connection (channel error?)")
            #expect(log.batches.contains { Set($0) == Set(batch) }, "the seven did not arrive as one batch: \(log.batches)")
            let entries = log.entries
            // Only the requeued message comes again; a channel error would have redelivered the unacked rest.
            #expect(entries.filter(\.redelivered).map(\.body) == ["requeue-4"], "redelivered: \(entries.filter(\.redelivered).map(\.body))")
            #expect(entries.count == 9, "\(entries.map(\.body))")
            for body in batch where body != "requeue-4" {
                #expect(entries.filter { $0.body == body }.count == 1, "\(body)")
            }
            #expect(deadLog.bodies == ["dead-2"])
            if useDeadLetterPublisher {
                #expect(deadLog.entries.first?.properties.headers["x-notify-reason"] == "poison")
            }
            let leftovers = try await drain(queue, topology: topology, for: .seconds(1))
            #expect(leftovers.isEmpty, "left in the queue: \(leftovers.map(\.body))")
        }
    }
}

// MARK: Graceful shutdown

extension AMQPBrokerTests {
    @Test("graceful shutdown mid-batch acks the batch in hand and returns the rest to the queue", .timeLimit(.minutes(1)))
    func gracefulShutdown() async throws {
        let queue = TestBroker.uniqueQueueName("shutdown")
        let topology = AMQPTopology.workQueue(queue)
        let expected = (0..<100).map { "s-\($0)" }
        try await withQueues([queue, "\(queue).dead"]) {
            try await withPublisher(try TestBroker.configuration(), logger: TestBroker.logger, topology: topology) { publisher in
                try await publish(expected, to: queue, with: publisher)
            }

            let progress = Mutex<(started: Int, finished: Int)>((0, 0))
            let first = DeliveryLog()
            let consumer = AMQPConsumer(
                configuration: try TestBroker.configuration(), queue: queue, topology: topology,
                options: .init(prefetch: 20, maximumBatch: 5), logger: TestBroker.logger
            ) { batch in
                first.record(batch)
                progress.withLock { $0.started += 1 }
                try? await Task.sleep(for: .milliseconds(300))
                progress.withLock { $0.finished += 1 }
                return batch.map { _ in .ack }
            }
            let shutdownBegan = Mutex<ContinuousClock.Instant?>(nil)
            try await withServices([consumer], logger: TestBroker.logger) {
                #expect(await eventually(.seconds(20)) { progress.withLock { $0.started } >= 3 })
                // The handler is now sleeping in the middle of its third batch.
                try await Task.sleep(for: .milliseconds(100))
                shutdownBegan.withLock { $0 = .now }
            }
            let shutdownTook = ContinuousClock.now - shutdownBegan.withLock { $0! }
            #expect(shutdownTook < .seconds(5), "shutting down took \(shutdownTook)")
            let (started, finished) = progress.withLock { ($0.started, $0.finished) }
            #expect(started == finished, "the batch in hand was not finished")

            let handled = first.bodies
            #expect(handled.count >= 3 && handled.count < expected.count, "handled \(handled.count)")
            #expect(duplicates(handled).isEmpty)

            let second = DeliveryLog()
            let remainingCount = expected.count - Set(handled).count
            let secondConsumer = try makeConsumer(queue: queue, topology: topology, log: second)
            try await withServices([secondConsumer], logger: TestBroker.logger) {
                #expect(await eventually(.seconds(20)) { second.count >= remainingCount }, "\(second.count) of \(remainingCount)")
                try await Task.sleep(for: .milliseconds(700))
            }
            let rest = second.bodies
            #expect(Set(handled).isDisjoint(with: rest), "consumed twice: \(Set(handled).intersection(rest).sorted())")
            #expect(Set(handled).union(rest) == Set(expected), "lost: \(Set(expected).subtracting(handled).subtracting(rest).sorted())")
            #expect(rest.count == remainingCount)
            #expect(duplicates(rest).isEmpty)
        }
    }
}

// MARK: Cancellation

extension AMQPBrokerTests {
    /// A service that fails shortly after starting.
    struct FailingService: Service {
        func run() async throws {
            try await Task.sleep(for: .milliseconds(500))
            throw TestFailure("the other service failed")
        }
    }

    /// ServiceGroup cancels every service when one of them throws (the default failure behaviour) and
    /// waits for them; a consumer that ignored cancellation would keep the process from ever exiting.
    @Test("a consumer ends when its service group cancels it because another service failed", .timeLimit(.minutes(1)))
    func consumerCancelled() async throws {
        let queue = TestBroker.uniqueQueueName("cancelled")
        let topology = AMQPTopology.workQueue(queue)
        try await withQueues([queue, "\(queue).dead"]) {
            try await withPublisher(try TestBroker.configuration(), logger: TestBroker.logger, topology: topology) { publisher in
                try await publish((0..<10).map { "c-\($0)" }, to: queue, with: publisher)
            }
            let log = DeliveryLog()
            let consumer = try makeConsumer(queue: queue, topology: topology, log: log)
            let group = ServiceGroup(configuration: .init(services: [consumer, FailingService()], logger: TestBroker.logger))
            let started = ContinuousClock.now
            let error = await #expect(throws: TestFailure.self) {
                try await withTimeout(.seconds(15), "the service group ending after a service failed") { try await group.run() }
            }
            #expect(error?.description == "the other service failed", "got \(String(describing: error))")
            #expect(ContinuousClock.now - started < .seconds(10))
            #expect(log.count == 10)
            #expect(!consumer.isConnected)
        }
    }
}

// MARK: Settling after a wait

extension AMQPBrokerTests {
    @Test(
        "a batch answered with a wait holds no slot: the consumer hands out further batches meanwhile and acks each only when its wait ends",
        .timeLimit(.minutes(1)))
    func settleAfterWait() async throws {
        let queue = TestBroker.uniqueQueueName("settle-after")
        let topology = AMQPTopology.workQueue(queue)
        let expected = (0..<20).map { "w-\($0)" }
        try await withQueues([queue, "\(queue).dead"]) {
            try await withPublisher(try TestBroker.configuration(), logger: TestBroker.logger, topology: topology) { publisher in
                try await publish(expected, to: queue, with: publisher)
            }
            let log = DeliveryLog()
            let released = Mutex(false)
            let consumer = AMQPConsumer(
                configuration: try TestBroker.configuration(), queue: queue, topology: topology,
                options: .init(prefetch: 20, maximumBatch: 2, concurrentBatches: 1), logger: TestBroker.logger,
                deferringHandler: { batch in
                    log.record(batch)
                    return .settleAfter {
                        _ = await eventually(.seconds(50)) { released.withLock { $0 } }
                        return batch.map { _ in .ack }
                    }
                })
            try await withServices([consumer], logger: TestBroker.logger) {
                // One slot, batches of 2: all 20 reach the handler only if waiting batches leave their slot.
                #expect(await eventually(.seconds(20)) { log.count >= expected.count }, "only \(log.count) of \(expected.count) were handed out")
                #expect(log.batches.count >= 10, "batches: \(log.batches.map(\.count))")
                // The broker's counts lag by a few seconds: an ack sent now would keep them from ever showing all 20.
                let held = try await TestBroker.waitForMessageCount(queue, expected.count)
                #expect(held == expected.count, "acked before the wait ended: the queue holds \(held ?? -1)")
                released.withLock { $0 = true }
                let left = try await TestBroker.waitForMessageCount(queue, 0)
                #expect(left == 0, "not acked after the wait ended: the queue holds \(left ?? -1)")
            }
            #expect(Set(log.bodies) == Set(expected))
            #expect(duplicates(log.bodies).isEmpty)
            #expect(log.entries.allSatisfy { !$0.redelivered })
        }
    }

    @Test(
        "started in order, single-message batches handled four at once reach the handler in the order they were published, and their waits still overlap",
        .timeLimit(.minutes(1)))
    func startsInOrder() async throws {
        let queue = TestBroker.uniqueQueueName("starts-in-order")
        let topology = AMQPTopology.workQueue(queue)
        let expected = (0..<300).map { String(format: "s-%03d", $0) }
        try await withQueues([queue, "\(queue).dead"]) {
            try await withPublisher(try TestBroker.configuration(), logger: TestBroker.logger, topology: topology) { publisher in
                try await publish(expected, to: queue, with: publisher)
            }
            let log = DeliveryLog()
            let overlap = Overlap()
            let consumer = AMQPConsumer(
                configuration: try TestBroker.configuration(), queue: queue, topology: topology,
                options: .init(prefetch: 64, maximumBatch: 1, concurrentBatches: 4, startsInOrder: true), logger: TestBroker.logger,
                deferringHandler: { batch in
                    // The part that takes each message's place (as webhook lanes do), then a wait that may overlap.
                    log.record(batch)
                    return .settleAfter {
                        overlap.begin()
                        try? await Task.sleep(for: .milliseconds(Int.random(in: 0...3)))
                        overlap.end()
                        return batch.map { _ in .ack }
                    }
                })
            try await withServices([consumer], logger: TestBroker.logger) {
                #expect(await eventually(.seconds(30)) { log.count >= expected.count }, "only \(log.count) of \(expected.count) arrived")
                let left = try await TestBroker.waitForMessageCount(queue, 0)
                #expect(left == 0, "not all acked: the queue holds \(left ?? -1)")
            }
            #expect(log.bodies == expected, "the handler was called out of order")
            #expect(overlap.most > 1, "the waits never overlapped")
            #expect(log.entries.allSatisfy { !$0.redelivered })
        }
    }
}

// MARK: Queue depths

extension AMQPBrokerTests {
    @Test(
        "queue depths are the messages ready in each queue, read at once; a missing queue is left out and the reads around it still answer",
        .timeLimit(.minutes(1)))
    func queueDepths() async throws {
        let queue = TestBroker.uniqueQueueName("depth")
        let missing = TestBroker.uniqueQueueName("depth-missing")
        let topology = AMQPTopology.workQueue(queue)
        try await withQueues([queue, "\(queue).dead"]) {
            try await withPublisher(try TestBroker.configuration(), logger: TestBroker.logger, topology: topology) { publisher in
                try await publish((0..<7).map { "d-\($0)" }, to: queue, with: publisher)
            }
            let reader = AMQPQueueDepths(configuration: try TestBroker.configuration(), logger: TestBroker.logger)
            try await withServices([reader], logger: TestBroker.logger) {
                #expect(await eventually(.seconds(10)) { reader.isConnected })
                // The missing queue closes the channel; the queue read after it must still be answered.
                #expect(try await reader.depths(of: [missing, queue, "\(queue).dead"]) == [queue: 7, "\(queue).dead": 0])
                // Nothing lags behind the broker: one more message shows in the next read.
                try await withPublisher(try TestBroker.configuration(), logger: TestBroker.logger, topology: topology) { publisher in try await publish(["d-7"], to: queue, with: publisher) }
                #expect(try await reader.depths(of: [queue]) == [queue: 8])
                #expect(try await reader.depths(of: [missing]).isEmpty)
            }
            await #expect(throws: AMQPError.self) { try await reader.depths(of: [queue]) }
        }
    }
}

// MARK: A bounded dead-letter queue

extension AMQPBrokerTests {
    /// The metrics of this test process, recorded (bootstrapped once, before the consumer that counts is made).
    static let metrics: TestMetrics = {
        let metrics = TestMetrics()
        MetricsSystem.bootstrap(metrics)
        return metrics
    }()

    @Test(
        "a full dead-letter queue (max-length, reject-publish) refuses the copies: the messages are dropped, counted in notify_dead_letters_dropped_total, and the queue stays bounded",
        .timeLimit(.minutes(1)))
    func fullDeadLetterQueueDropsAndCounts() async throws {
        let metrics = Self.metrics
        let queue = TestBroker.uniqueQueueName("dead-bounded")
        let deadQueue = "\(queue).dead"
        let policy = "test-dead-bounded-\(queue)"
        let topology = AMQPTopology.workQueue(queue)
        try await TestBroker.ctl([
            "-q", "set_policy", "-p", TestBroker.virtualHost, "--apply-to", "queues", policy,
            "^\(NSRegularExpression.escapedPattern(for: deadQueue))$", #"{"max-length":5,"overflow":"reject-publish"}"#,
        ])
        try await withQueues([queue, deadQueue, "policy:\(policy)"]) {
            let mainLog = DeliveryLog()
            try await withPublisher(try TestBroker.configuration(), logger: TestBroker.logger, topology: topology) { publisher in
                let messages = (0..<40).map { AMQPOutboundMessage(routingKey: queue, body: Data("poison \($0)".utf8)) }
                try await withTimeout(.seconds(10), "publishing") { try await publisher.publish(messages) }
                let consumer = try makeConsumer(
                    queue: queue, topology: topology, options: .init(prefetch: 1, maximumBatch: 1), deadLetterPublisher: publisher, log: mainLog
                ) { _ in .deadLetter(reason: "poison") }
                try await withServices([consumer], logger: TestBroker.logger) {
                    #expect(await eventually(.seconds(30)) { mainLog.count >= 40 }, "only \(mainLog.count) of 40 handled")
                    try await Task.sleep(for: .seconds(1))
                }
            }
            let dropped = try metrics.expectCounter("notify_dead_letters_dropped_total", [("queue", queue)]).totalValue
            #expect(dropped > 0, "copies the full queue refused are counted")
            let kept = try await TestBroker.waitForMessageCount(deadQueue, 5, timeout: .seconds(5)) ?? 0
            #expect(kept <= 15, "the dead-letter queue stays near its bound of 5: \(kept)")
        }
    }
}

// MARK: Queue bindings

extension AMQPBrokerTests {
    @Test(
        "queues are bound and unbound over AMQP: a message reaches the queue through the exchange only while bound; taking away a binding already gone is no error; binding a missing queue is refused and the connection serves the next call",
        .timeLimit(.minutes(1)))
    func queueBindings() async throws {
        let queue = TestBroker.uniqueQueueName("bound")
        let binding = AMQPTopology.Binding(queue: queue, exchange: "amq.fanout", routingKey: "")
        let missing = AMQPTopology.Binding(queue: TestBroker.uniqueQueueName("bound-missing"), exchange: "amq.fanout", routingKey: "")
        try await withQueues([queue]) {
            try await withPublisher(try TestBroker.configuration(), logger: TestBroker.logger, topology: AMQPTopology(queues: [.init(name: queue, deadLetterQueue: nil, deliveryLimit: nil)])) { publisher in
                /// Publishes one mandatory message to the exchange; answers the error code when it reached no queue.
                @Sendable func publishThroughExchange(_ body: String) async throws -> AMQPError.Code? {
                    do {
                        try await publisher.publish([AMQPOutboundMessage(exchange: binding.exchange, routingKey: "", body: Data(body.utf8))])
                        return nil
                    } catch let error as AMQPError {
                        return error.code
                    }
                }
                let bindings = AMQPQueueBindings(configuration: try TestBroker.configuration(), logger: TestBroker.logger)
                try await withServices([bindings], logger: TestBroker.logger) {
                    #expect(await eventually(.seconds(10)) { bindings.isConnected })
                    #expect(try await publishThroughExchange("before") == .unroutable, "not bound yet")

                    try await bindings.bind(binding)
                    try await bindings.bind(binding)
                    #expect(try await publishThroughExchange("bound") == nil)
                    #expect(try await TestBroker.waitForMessageCount(queue, 1) == 1)

                    try await bindings.unbind(binding)
                    try await bindings.unbind(binding)
                    #expect(try await publishThroughExchange("unbound") == .unroutable, "the binding is gone")

                    await #expect { try await bindings.bind(missing) } throws: { ($0 as? AMQPError)?.code == .refused }
                    try await bindings.unbind(missing)
                    try await bindings.bind(binding)
                    #expect(try await publishThroughExchange("bound again") == nil, "the connection served the calls after the refusal")
                    #expect(try await TestBroker.waitForMessageCount(queue, 2) == 2)
                }
                await #expect(throws: AMQPError.self) { try await bindings.bind(binding) }
            }
        }
    }
}
