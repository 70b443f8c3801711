import Foundation
import NotifyAMQP
import NotifyTestSupport
import Synchronization
import Testing

extension AMQPBrokerTests {
    /// What a stream of publishes during the restart ran into.
    final class PublishOutcomes: Sendable {
        private struct State {
            var confirmed: [String] = []
            var failures: [String: Int] = [:]
            var hung: [String] = []
        }

        private let state = Mutex(State())
        func confirmed(_ body: String) { state.withLock { $0.confirmed.append(body) } }
        func failed(_ code: String) { state.withLock { $0.failures[code, default: 0] += 1 } }
        func hung(_ body: String) { state.withLock { $0.hung.append(body) } }
        var confirmedBodies: [String] { state.withLock { $0.confirmed } }
        var failures: [String: Int] { state.withLock { $0.failures } }
        var hungBodies: [String] { state.withLock { $0.hung } }
    }

    /// Runs on a private node started for it (see `PrivateBroker`): restarting the shared one would break
    /// the EndToEndTests running in parallel in the same process, and any stack using it.
    @Test(
        "after a broker restart publisher and consumer reconnect by themselves and no durable message is lost",
        .enabled(if: FileManager.default.isExecutableFile(atPath: TestBroker.script), "needs deploy/local/rabbitmq.sh to run a broker of its own"),
        .timeLimit(.minutes(3))
    )
    func brokerRestart() async throws {
        try await PrivateBroker.with { broker in
            try await brokerRestart(on: broker)
        }
    }

    private func brokerRestart(on broker: PrivateBroker) async throws {
        let url = broker.url
        let queue = TestBroker.uniqueQueueName("restart")
        let streamQueue = TestBroker.uniqueQueueName("restart-stream")
        let topology = AMQPTopology.workQueue(queue).merging(.workQueue(streamQueue))
        let before = (0..<300).map { "before-\($0)" }
        let after = (0..<50).map { "after-\($0)" }
        let started = ContinuousClock.now

        let log = DeliveryLog()
        let outcomes = PublishOutcomes()
        let consumedBeforeRestart = Mutex(0)
        // About 100 messages a second, so most of `before` is still queued when the broker goes down.
        let consumer = AMQPConsumer(
            configuration: try TestBroker.configuration(url: url), queue: queue, topology: topology,
            options: .init(prefetch: 10, maximumBatch: 10), logger: TestBroker.logger
        ) { batch in
            log.record(batch)
            try? await Task.sleep(for: .milliseconds(100))
            return batch.map { _ in .ack }
        }

        try await withPublisher(try TestBroker.configuration(url: url), logger: TestBroker.logger, topology: topology) { publisher in
            try await withServices([consumer], logger: TestBroker.logger) {
                #expect(await eventually(.seconds(15)) { consumer.isConnected }, "the consumer did not connect")
                try await publish(before, to: queue, with: publisher, batchSize: 50)

                // A steady stream of publishes (batches of 20 messages of 1 KiB, so the connection thread is
                // often writing when the broker goes away) through the whole restart: each call must end,
                // confirmed or failed, within 10 s; a hang is a bug.
                let streaming = Mutex(true)
                let stream = Task {
                    var index = 0
                    let padding = String(repeating: "x", count: 1024)
                    while streaming.withLock({ $0 }) {
                        let bodies = (0..<20).map { "stream-\(index + $0)" }
                        index += bodies.count
                        let messages = bodies.map { AMQPOutboundMessage(routingKey: streamQueue, body: Data("\($0) \(padding)".utf8)) }
                        do {
                            try await withTimeout(.seconds(10), "publishing \(bodies[0])...") { try await publisher.publish(messages) }
                            for body in bodies { outcomes.confirmed(body) }
                        } catch let error as AMQPError {
                            outcomes.failed("\(error.code)")
                        } catch {
                            outcomes.hung(bodies[0])
                        }
                        try? await Task.sleep(for: .milliseconds(5))
                    }
                }

                consumedBeforeRestart.withLock { $0 = log.uniqueBodies.count }
                let restart = Task { try await broker.control("restart") }

                // During the outage publish fails at once instead of waiting for the broker.
                #expect(await eventually(.seconds(30)) { !publisher.isConnected }, "the publisher never noticed the broker stopping")
                consumedBeforeRestart.withLock { $0 = min($0, log.uniqueBodies.count) }
                let attempt = ContinuousClock.now
                let error = await #expect(throws: AMQPError.self) {
                    try await withTimeout(.seconds(5), "publishing while the broker is down") {
                        try await publisher.publish(AMQPOutboundMessage(routingKey: queue, body: Data("during-outage".utf8)))
                    }
                }
                #expect(error?.code == .notConnected, "got \(String(describing: error))")
                #expect(ContinuousClock.now - attempt < .seconds(1))
                #expect(await eventually(.seconds(30)) { !consumer.isConnected }, "the consumer never noticed the broker stopping")

                let (status, output) = try await restart.value
                #expect(status == 0, "rabbitmq.sh restart failed: \(output)")

                #expect(await publisher.waitUntilConnected(timeout: .seconds(30)), "the publisher did not reconnect")
                #expect(await eventually(.seconds(30)) { consumer.isConnected }, "the consumer did not reconnect")
                try await publish(after, to: queue, with: publisher, batchSize: 50)

                let wanted = Set(before + after)
                #expect(
                    await eventually(.seconds(40)) { log.uniqueBodies.isSuperset(of: wanted) },
                    "missing: \(wanted.subtracting(log.uniqueBodies).count)")
                try await Task.sleep(for: .milliseconds(500))
                streaming.withLock { $0 = false }
                await stream.value
            }
        }

        let received = log.bodies
        let consumedEarly = consumedBeforeRestart.withLock { $0 }
        #expect(consumedEarly < before.count, "everything was consumed before the restart, so nothing had to survive it")
        #expect(Set(received).isSuperset(of: before + after), "lost: \(Set(before + after).subtracting(received).sorted())")
        #expect(!received.contains("during-outage"))
        // Only what the consumer held when the broker went down (prefetch + the batch in hand) may come twice.
        let twice = duplicates(received)
        #expect(twice.count <= 20, "delivered more than once: \(twice.keys.sorted())")
        #expect(twice.keys.allSatisfy { $0.hasPrefix("before-") })

        // The stream: nothing hung, failures are only the documented transient ones, and every confirmed message is stored.
        #expect(outcomes.hungBodies.isEmpty, "publish calls that never returned: \(outcomes.hungBodies)")
        #expect(Set(outcomes.failures.keys).isSubset(of: ["notConnected", "connectionLost"]), "failures: \(outcomes.failures)")
        #expect(outcomes.failures["notConnected", default: 0] > 0)
        let stored = try await drain(streamQueue, topology: topology, url: url, for: .seconds(2)).map { String($0.body.prefix { $0 != " " }) }
        let confirmed = outcomes.confirmedBodies
        #expect(Set(stored).isSuperset(of: confirmed), "confirmed but lost: \(Set(confirmed).subtracting(stored).sorted())")
        print("""
            broker restart: \(consumedEarly) of \(before.count) consumed before the outage, \(twice.count) delivered twice; \
            stream: \(confirmed.count) confirmed, failures \(outcomes.failures), \(stored.count) stored; \
            took \(ContinuousClock.now - started)
            """)
    }
}
