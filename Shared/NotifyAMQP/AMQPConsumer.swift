import Foundation
import Logging
import Metrics
import ServiceLifecycle
import Synchronization

/// Consumes a queue with prefetch and manual acknowledgements on a connection owned by its own thread.
///
/// The handler gets batches (everything that arrived while it was busy, up to `maximumBatch`) and answers
/// one disposition per delivery; the consumer then acks (one ack-multiple for a run of acks), dead-letters
/// with the reason, or requeues. On graceful shutdown it stops handing out work, lets the handler finish
/// the batch it holds, settles it, and closes; what it had not handed out goes back to the queue.
/// After a broker restart it reconnects with backoff and declares the topology again.
public final class AMQPConsumer: Service, Sendable {
    /// Handles one batch and returns a disposition per delivery, in order.
    public typealias Handler = @Sendable ([AMQPDelivery]) async -> [AMQPDisposition]
    /// A handler of batches that overlap in order (`Options.inOrder`): it may wait for the batch before its own.
    public typealias OrderedHandler = @Sendable ([AMQPDelivery], AMQPBatchOrder) async -> [AMQPDisposition]
    /// A handler that may answer with a wait for its dispositions (`AMQPHandling.settleAfter`).
    public typealias DeferringHandler = @Sendable ([AMQPDelivery]) async -> AMQPHandling

    /// How a consumer consumes.
    public struct Options: Sendable {
        public var prefetch: Int
        public var maximumBatch: Int
        /// Batches handled at once. With 1 (the default) batches are handled in order and settled with one
        /// ack-multiple each; with more, a slow batch does not hold up the next ones, and acks are per message.
        public var concurrentBatches: Int
        /// With `concurrentBatches` above 1: batches are still settled in the order they were taken, with one
        /// ack-multiple each, and the handler can wait for the batch before its own (`AMQPBatchOrder`), so that
        /// it works on the next batch while the last one finishes and still publishes in order. A further batch
        /// is taken only while a full one waits: light load is handled in whole batches, not split.
        /// Needs `prefetch` above `maximumBatch`, or the broker never sends a second batch while one is held.
        public var inOrder: Bool
        /// The handler is called for each batch in the order the batches were taken, each call answering before the
        /// next batch is handed out; only what it answers (`AMQPHandling.settleAfter`'s wait) runs beside other
        /// batches. For a deferring handler that takes each message's place in an order of its own (a lane per app)
        /// and must answer at once. Without it, the calls run in tasks of their own and may start in any order.
        public var startsInOrder: Bool
        public init(prefetch: Int = 500, maximumBatch: Int = 500, concurrentBatches: Int = 1, inOrder: Bool = false, startsInOrder: Bool = false) {
            self.prefetch = prefetch
            self.maximumBatch = maximumBatch
            self.concurrentBatches = max(concurrentBatches, 1)
            self.inOrder = inOrder || concurrentBatches <= 1
            self.startsInOrder = startsInOrder
        }
    }

    private enum Settlement {
        case ack(UInt64, multiple: Bool)
        case reject(UInt64, requeue: Bool)
    }

    private struct SharedState {
        var settlements: [(generation: UInt64, settlement: Settlement)] = []
        var stopping = false
        var connected = false
    }

    private let configuration: AMQPConfiguration
    private let queue: String
    private let topology: AMQPTopology
    private let options: Options
    private let deadLetterPublisher: AMQPPublisher?
    private let logger: Logger
    private let handler: @Sendable ([AMQPDelivery], AMQPBatchOrder) async -> AMQPHandling
    private let thread = ConnectionThread()
    private let buffer: DeliveryBuffer
    private let shared = Mutex<SharedState>(SharedState())
    /// `notify_amqp_messages_total{queue,disposition}`: what became of each message handed to the handler.
    private let settled: (acked: Counter, requeued: Counter, deadLettered: Counter)
    /// Dead-letter copies the broker refused (a bounded dead-letter queue that is full): those messages are dropped.
    private let deadLettersDropped: Counter

    /// - Parameter deadLetterPublisher: republishes dead-lettered messages with an `x-notify-reason` header;
    ///   without one (or if that fails) the message is rejected into the queue's dead-letter exchange.
    public convenience init(
        configuration: AMQPConfiguration, queue: String, topology: AMQPTopology, options: Options = Options(),
        deadLetterPublisher: AMQPPublisher? = nil, logger: Logger, handler: @escaping Handler
    ) {
        self.init(
            configuration: configuration, queue: queue, topology: topology, options: options,
            deadLetterPublisher: deadLetterPublisher, logger: logger, handling: { batch, _ in .settle(await handler(batch)) })
    }

    /// A consumer whose handler is told where its batch stands among those handled at once (`Options.inOrder`).
    public convenience init(
        configuration: AMQPConfiguration, queue: String, topology: AMQPTopology, options: Options = Options(),
        deadLetterPublisher: AMQPPublisher? = nil, logger: Logger, orderedHandler handler: @escaping OrderedHandler
    ) {
        self.init(
            configuration: configuration, queue: queue, topology: topology, options: options,
            deadLetterPublisher: deadLetterPublisher, logger: logger, handling: { batch, order in .settle(await handler(batch, order)) })
    }

    /// A consumer whose handler may hand back a wait for its dispositions, during which it takes further batches.
    public convenience init(
        configuration: AMQPConfiguration, queue: String, topology: AMQPTopology, options: Options = Options(),
        deadLetterPublisher: AMQPPublisher? = nil, logger: Logger, deferringHandler handler: @escaping DeferringHandler
    ) {
        self.init(
            configuration: configuration, queue: queue, topology: topology, options: options,
            deadLetterPublisher: deadLetterPublisher, logger: logger, handling: { batch, _ in await handler(batch) })
    }

    private init(
        configuration: AMQPConfiguration, queue: String, topology: AMQPTopology, options: Options,
        deadLetterPublisher: AMQPPublisher?, logger: Logger, handling handler: @escaping @Sendable ([AMQPDelivery], AMQPBatchOrder) async -> AMQPHandling
    ) {
        self.configuration = configuration
        self.queue = queue
        self.topology = topology
        self.options = options
        self.deadLetterPublisher = deadLetterPublisher
        self.logger = logger
        self.handler = handler
        buffer = DeliveryBuffer(maximumBatch: options.maximumBatch, overlapsOnlyWhenFull: options.inOrder && options.concurrentBatches > 1)
        func counter(_ disposition: String) -> Counter {
            Counter(label: "notify_amqp_messages_total", dimensions: [("queue", queue), ("disposition", disposition)])
        }
        settled = (counter("ack"), counter("requeue"), counter("deadLetter"))
        deadLettersDropped = Counter(label: "notify_dead_letters_dropped_total", dimensions: [("queue", queue)])
    }

    /// Whether the connection is up (for health checks).
    public var isConnected: Bool { shared.withLock { $0.connected } }

    public func run() async throws {
        thread.start(name: "amqp-in:\(queue)") { [self] in threadMain() }
        // Cancellation (e.g. a ServiceGroup cancelling all services after one failed) stops the consumer
        // like a graceful shutdown; `buffer.next` alone would wait forever.
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await withDiscardingTaskGroup { group in
                    var running = 0
                    let (finished, reportFinished) = AsyncStream<Void>.makeStream()
                    var finishedIterator = finished.makeAsyncIterator()
                    // In order, each batch is settled after the one before it (whose signal this is).
                    var previousSettled: CompletionSignal?
                    while true {
                        // Take the next batch only once a slot is free: what arrives meanwhile makes it bigger.
                        if running == options.concurrentBatches {
                            await finishedIterator.next()
                            running -= 1
                        }
                        guard let batch = await buffer.next() else { break }
                        running += 1
                        let order = AMQPBatchOrder(previousSettled: options.inOrder ? previousSettled : nil)
                        let settled = CompletionSignal()
                        previousSettled = settled
                        let startedHandling = options.startsInOrder ? await self.handler(batch, order) : nil
                        group.addTask {
                            func releaseSlot() {
                                self.buffer.batchFinished()
                                reportFinished.yield()
                            }
                            let handling: AMQPHandling
                            if let startedHandling { handling = startedHandling } else { handling = await self.handler(batch, order) }
                            let dispositions: [AMQPDisposition]
                            switch handling {
                            case .settle(let answered):
                                dispositions = answered
                            case .settleAfter(let wait):
                                // The batch no longer takes a slot: the consumer goes on while it waits.
                                releaseSlot()
                                dispositions = await wait()
                            }
                            await order.waitForPreviousBatch()
                            await self.settle(batch, dispositions)
                            settled.complete()
                            if case .settle = handling { releaseSlot() }
                        }
                    }
                    reportFinished.finish()
                }
            } onGracefulShutdown: {
                self.buffer.finish()
            }
        } onCancel: {
            self.buffer.finish()
        }
        shared.withLock { $0.stopping = true }
        thread.wake()
        await thread.waitUntilFinished()
    }

    // MARK: Settling

    private func settle(_ batch: [AMQPDelivery], _ dispositions: [AMQPDisposition]) async {
        precondition(batch.count == dispositions.count, "the handler must answer one disposition per delivery")
        var settlements: [(UInt64, Settlement)] = []
        var acked: [AMQPDeliveryTag] = []
        for (delivery, disposition) in zip(batch, dispositions) {
            let tag = delivery.tag
            switch disposition {
            case .ack:
                acked.append(tag)
            case .requeue:
                settlements.append((tag.connectionGeneration, .reject(tag.value, requeue: true)))
            case .deadLetter(let reason):
                switch await republishToDeadLetterQueue(delivery, reason: reason) {
                case .kept, .dropped:
                    acked.append(tag)
                case .notRepublished:
                    settlements.append((tag.connectionGeneration, .reject(tag.value, requeue: false)))
                }
            }
        }
        let requeued = dispositions.count { if case .requeue = $0 { true } else { false } }
        let deadLettered = dispositions.count { if case .deadLetter = $0 { true } else { false } }
        settled.acked.increment(by: batch.count - requeued - deadLettered)
        if requeued > 0 { settled.requeued.increment(by: requeued) }
        if deadLettered > 0 { settled.deadLettered.increment(by: deadLettered) }
        if !options.inOrder {
            for tag in acked { settlements.append((tag.connectionGeneration, .ack(tag.value, multiple: false))) }
        } else if let highest = acked.max() {
            // Every earlier batch is settled before this one (handled one at a time, or in order), and later ones
            // hold only higher tags, so one ack-multiple on the highest tag settles every ack of the batch
            // (its rejected tags are settled just before, in the same list).
            settlements.append((highest.connectionGeneration, .ack(highest.value, multiple: true)))
        }
        shared.withLock { state in
            for (generation, settlement) in settlements {
                state.settlements.append((generation, settlement))
            }
        }
        thread.wake()
    }

    /// What became of a dead-lettered message's copy.
    private enum DeadLetterCopy {
        /// The dead-letter queue has it.
        case kept
        /// The dead-letter queue refused it (full: a bounded queue with `overflow: reject-publish`). The message is
        /// dropped and counted; rejecting it instead would let the broker's own dead-lettering put it there anyway.
        case dropped
        /// No copy was made (no publisher, or the connection failed): the broker dead-letters the rejected message.
        case notRepublished
    }

    private func republishToDeadLetterQueue(_ delivery: AMQPDelivery, reason: String) async -> DeadLetterCopy {
        logger.error("dead-lettering a message", metadata: ["queue": "\(queue)", "reason": "\(reason)", "messageId": "\(delivery.properties.messageId ?? "-")"])
        guard let deadLetterPublisher else { return .notRepublished }
        var properties = delivery.properties
        properties.headers["x-notify-reason"] = .string(reason)
        properties.headers["x-notify-queue"] = .string(queue)
        properties.headers["x-notify-routing-key"] = .string(delivery.routingKey)
        // The broker would refuse our copy with another user's user_id: the sender is kept in a header instead.
        if let sender = properties.userId { properties.headers["x-notify-user-id"] = .string(sender) }
        properties.userId = nil
        do {
            try await deadLetterPublisher.publish(AMQPOutboundMessage(
                exchange: AMQPTopology.deadLetterExchange, routingKey: AMQPTopology.deadLetterQueue(of: queue), body: delivery.body, properties: properties))
            return .kept
        } catch let error as AMQPError where error.code == .nacked {
            logger.error("the dead-letter queue refused the copy (full): the message is dropped", metadata: ["queue": "\(AMQPTopology.deadLetterQueue(of: queue))"])
            deadLettersDropped.increment()
            return .dropped
        } catch {
            logger.warning("could not republish to the dead-letter queue; rejecting instead", metadata: ["error": "\(error)"])
            return .notRepublished
        }
    }

    // MARK: The connection thread

    private func threadMain() {
        thread.runConnections(
            configuration: configuration, logger: logger, role: "consumer of \(queue)",
            isStopping: { shared.withLock { $0.stopping } },
            prepare: { connection throws(AMQPError) in
                try connection.declare(topology)
                try connection.startConsuming(queue: queue, prefetch: options.prefetch)
            },
            onConnected: { connection in
                buffer.dropDeliveries(before: connection.generation)
                shared.withLock { $0.connected = true }
            },
            serve: serve,
            onDisconnected: { shared.withLock { $0.connected = false } })
    }

    private func serve(_ connection: AMQPWireConnection) throws(AMQPError) {
        let idleWait = Int32(max(configuration.heartbeatSeconds, 1) * 250)
        var received: [AMQPDelivery] = []
        received.reserveCapacity(options.prefetch)
        while true {
            let (settlements, stopping) = shared.withLock { state in
                defer { state.settlements = [] }
                return (state.settlements, state.stopping)
            }
            for (generation, settlement) in settlements where generation == connection.generation {
                switch settlement {
                case .ack(let tag, let multiple): try connection.ack(tag, multiple: multiple)
                case .reject(let tag, let requeue): try connection.reject(tag, requeue: requeue)
                }
            }
            if stopping { return }
            while let event = try connection.nextEvent() {
                if case .delivery(let delivery) = event { received.append(delivery) }
            }
            if !received.isEmpty {
                if buffer.isAccepting {
                    buffer.append(received)
                }
                received.removeAll(keepingCapacity: true)
            }
            if connection.hasBufferedInput { continue }
            thread.wait(socket: connection.socketDescriptor, timeoutMilliseconds: idleWait)
        }
    }
}

/// What a handler answers for a batch.
public enum AMQPHandling: Sendable {
    /// One disposition per delivery, in order, settled now.
    case settle([AMQPDisposition])
    /// A wait that ends in the dispositions (for work the handler finishes later, in bulk with other batches').
    /// While it waits, the batch takes none of `concurrentBatches`: the consumer hands out further batches, up
    /// to the prefetch, and settles this one when the wait ends (after the batches before it, with `inOrder`).
    case settleAfter(@Sendable () async -> [AMQPDisposition])
}

/// Where a batch stands among the batches a consumer handles at once in order (`AMQPConsumer.Options.inOrder`).
public struct AMQPBatchOrder: Sendable {
    let previousSettled: CompletionSignal?

    /// The order of a batch with none before it (for a handler driven without a consumer, as tests drive it).
    public static let first = AMQPBatchOrder(previousSettled: nil)

    /// Waits until the batch taken before this one was handled and settled (at once if there is none): what the
    /// handler does after this follows everything that batch did.
    public func waitForPreviousBatch() async {
        await previousSettled?.wait()
    }
}
