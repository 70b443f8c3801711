/// Exchanges, queues and bindings a connection declares every time it connects,
/// so that a restarted broker (or a fresh one) has everything the service needs.
public struct AMQPTopology: Sendable {
    public struct Exchange: Sendable, Hashable {
        public var name: String
        public var type: String
        public init(name: String, type: String) {
            self.name = name
            self.type = type
        }
    }

    public struct Queue: Sendable, Hashable {
        public var name: String
        /// Messages rejected, or delivered too often, go here with the reason.
        public var deadLetterQueue: String?
        /// After this many failed deliveries a quorum queue dead-letters the message.
        public var deliveryLimit: Int?
        /// A durable quorum queue, or a transient one (classic, deleted with its last consumer) for
        /// notifications of an instance that are worthless once it is gone.
        public var durable: Bool
        public init(name: String, deadLetterQueue: String?, deliveryLimit: Int?, durable: Bool = true) {
            self.name = name
            self.deadLetterQueue = deadLetterQueue
            self.deliveryLimit = deliveryLimit
            self.durable = durable
        }
    }

    public struct Binding: Sendable, Hashable {
        public var queue: String
        public var exchange: String
        public var routingKey: String
        public init(queue: String, exchange: String, routingKey: String) {
            self.queue = queue
            self.exchange = exchange
            self.routingKey = routingKey
        }
    }

    /// The exchange dead-lettered messages are routed through (routing key = the DLQ's name).
    public static let deadLetterExchange = "notify.dead"

    public var exchanges: [Exchange]
    public var queues: [Queue]
    public var bindings: [Binding]

    public init(exchanges: [Exchange] = [], queues: [Queue] = [], bindings: [Binding] = []) {
        self.exchanges = exchanges
        self.queues = queues
        self.bindings = bindings
    }

    /// The dead-letter queue of the work queue `name`.
    public static func deadLetterQueue(of name: String) -> String { "\(name).dead" }

    /// A durable quorum work queue with its dead-letter queue `<name>.dead`.
    public static func workQueue(_ name: String, deliveryLimit: Int = 20) -> AMQPTopology {
        let deadLetter = deadLetterQueue(of: name)
        return AMQPTopology(
            exchanges: [Exchange(name: deadLetterExchange, type: "direct")],
            queues: [
                Queue(name: deadLetter, deadLetterQueue: nil, deliveryLimit: nil),
                Queue(name: name, deadLetterQueue: deadLetter, deliveryLimit: deliveryLimit),
            ],
            bindings: [Binding(queue: deadLetter, exchange: deadLetterExchange, routingKey: deadLetter)]
        )
    }

    /// Both topologies, declared in order (duplicates removed).
    public func merging(_ other: AMQPTopology) -> AMQPTopology {
        func unique<T: Hashable>(_ items: [T]) -> [T] {
            var seen = Set<T>()
            return items.filter { seen.insert($0).inserted }
        }
        return AMQPTopology(
            exchanges: unique(exchanges + other.exchanges),
            queues: unique(queues + other.queues),
            bindings: unique(bindings + other.bindings)
        )
    }
}
