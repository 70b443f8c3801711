import ArgumentParser
import Foundation
import Logging
import NotifyAMQP

/// Publishing over AMQP as an app's broker user: a publisher connected as that user, and a consumer of the user's reply
/// queue collecting ingest's verdicts (`loadgen http --transport amqp`, and the neighbour of `loadgen neighbours` that
/// publishes over AMQP).
struct AMQPSession: Sendable {
    let publisher: AMQPPublisher
    let replies: AMQPReplyCollector
    let user: String
    private let consumer: Task<Void, any Error>

    /// Connects to the broker at `url` (its host, port and vhost) as `broker`'s user, and starts consuming its replies;
    /// throws when either does not connect within 10 s.
    static func open(url: String, broker: (user: String, password: String)) async throws -> AMQPSession {
        var configuration = try AMQPConfiguration(url: url)
        (configuration.user, configuration.password) = broker
        var logger = Logger(label: "loadgen")
        logger.logLevel = .warning
        let replies = AMQPReplyCollector(queue: "\(broker.user).reply.loadgen")
        let consumer = AMQPConsumer(
            configuration: configuration, queue: replies.queue, topology: replies.topology,
            options: .init(prefetch: 500, maximumBatch: 500), logger: logger, handler: replies.handle)
        let consuming = Task { try await consumer.run() }
        let publisher = AMQPPublisher(configuration: configuration, logger: logger)
        publisher.startIfNeeded()
        guard await publisher.waitUntilConnected(timeout: .seconds(10)) else {
            consuming.cancel()
            throw ValidationError("cannot connect to the broker as the app's user \(broker.user)")
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while !consumer.isConnected, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        return AMQPSession(publisher: publisher, replies: replies, user: broker.user, consumer: consuming)
    }

    /// How a `Publisher` sends over this session.
    var transport: Publisher.Transport { .amqp(publisher, user: user, replies: replies) }

    /// Stops consuming and closes the publisher's connection.
    func close() async {
        consumer.cancel()
        await publisher.shutdown()
    }
}
