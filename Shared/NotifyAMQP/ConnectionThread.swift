import CAMQPShim
import Foundation
import Logging

/// A dedicated OS thread that owns one AMQP connection, and the eventfd that wakes it
/// when async callers hand it work. librabbitmq's calls block, so they never run on the
/// cooperative pool.
final class ConnectionThread: Sendable {
    private let wakeupDescriptor: Int32
    private let finished = CompletionSignal()

    init() {
        wakeupDescriptor = notify_wakeup_create()
        precondition(wakeupDescriptor >= 0, "eventfd failed")
    }

    deinit {
        notify_wakeup_close(wakeupDescriptor)
    }

    /// Starts `body` on a new thread named `name` as the OS shows it (`top -H`, `perf`; cut to 15 bytes).
    func start(name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread { [self] in
            // Foundation keeps `Thread.name` to itself on Linux; without this the thread shows the name of
            // whichever thread started it (a concurrency pool thread).
            notify_thread_set_name(name)
            body()
            finished.complete()
        }
        thread.name = name
        thread.start()
    }

    /// Suspends until the thread's body returned.
    func waitUntilFinished() async {
        await finished.wait()
    }

    /// Wakes the thread if it is waiting.
    func wake() {
        notify_wakeup_signal(wakeupDescriptor)
    }

    /// Waits (on the owning thread) until the socket is readable, the thread is woken, or the timeout passes.
    /// Pass -1 as the socket to wait only for a wake-up.
    @discardableResult
    func wait(socket: Int32, timeoutMilliseconds: Int32) -> (readable: Bool, woken: Bool) {
        let result = notify_wait_readable(socket, wakeupDescriptor, timeoutMilliseconds)
        if result < 0 { return (true, false) }
        if result & 2 != 0 { notify_wakeup_drain(wakeupDescriptor) }
        return (result & 1 != 0, result & 2 != 0)
    }
}

extension ConnectionThread {
    /// The owning thread's life: connect, `prepare` the connection, `serve` it until it returns (close politely)
    /// or throws (drop it), and again, until `isStopping`. `onConnected`/`onDisconnected` run around each served
    /// connection. Each attempt goes to the next of the configured nodes (starting at a random one, so instances
    /// spread over a cluster); only when every node failed in a row does it pause, with backoff.
    func runConnections(
        configuration: AMQPConfiguration, logger: Logger, role: String,
        isStopping: () -> Bool,
        prepare: (AMQPWireConnection) throws(AMQPError) -> Void,
        onConnected: (AMQPWireConnection) -> Void,
        serve: (AMQPWireConnection) throws(AMQPError) -> Void,
        onDisconnected: () -> Void
    ) {
        var backoff = ReconnectBackoff(configuration.reconnectDelay)
        var nodes = NodeRotation(count: configuration.endpoints.count)
        var generation: UInt64 = 0
        while !isStopping() {
            generation += 1
            let endpoint = configuration.endpoints[nodes.next()]
            let connection: AMQPWireConnection
            do {
                connection = try AMQPWireConnection(configuration: configuration, endpoint: endpoint, generation: generation)
                try prepare(connection)
            } catch {
                logger.warning("AMQP \(role) cannot connect; retrying", metadata: ["host": "\(endpoint)", "error": "\(error)"])
                if nodes.failed() {
                    wait(socket: -1, timeoutMilliseconds: backoff.nextMilliseconds())
                }
                continue
            }
            backoff.reset()
            nodes.connected()
            onConnected(connection)
            logger.info("AMQP \(role) connected", metadata: ["host": "\(endpoint)"])
            do {
                try serve(connection)
                connection.close()
            } catch {
                logger.warning("AMQP \(role) lost its connection", metadata: ["host": "\(endpoint)", "error": "\(error)"])
                connection.abandon()
            }
            onDisconnected()
        }
    }
}

/// Which broker node to try next: each attempt the next one round the list, from a random start.
struct NodeRotation {
    private let count: Int
    private var index: Int
    private var failuresInARow = 0

    init(count: Int) {
        precondition(count > 0, "AMQPConfiguration.endpoints is empty")
        self.count = count
        index = Int.random(in: 0..<count)
    }

    /// The index of the node to try now; the attempt after goes to the one after it.
    mutating func next() -> Int {
        defer { index = (index + 1) % count }
        return index
    }

    /// Records a failed attempt; true when every node has now failed in a row (time to pause).
    mutating func failed() -> Bool {
        failuresInARow += 1
        guard failuresInARow >= count else { return false }
        failuresInARow = 0
        return true
    }

    mutating func connected() { failuresInARow = 0 }
}

/// Exponential reconnect pauses with jitter.
struct ReconnectBackoff {
    let range: ClosedRange<Duration>
    private var next: Duration

    init(_ range: ClosedRange<Duration>) {
        self.range = range
        next = range.lowerBound
    }

    mutating func reset() { next = range.lowerBound }

    /// The pause before the next attempt, in milliseconds.
    mutating func nextMilliseconds() -> Int32 {
        let current = next
        next = min(next * 2, range.upperBound)
        let milliseconds = Double(current.components.seconds) * 1000 + Double(current.components.attoseconds) / 1e15
        return Int32(milliseconds * Double.random(in: 0.75...1.25))
    }
}
