import Logging
import ServiceLifecycle
import Synchronization

/// A connection of its own, owned by a dedicated thread, on which async callers have blocking AMQP operations
/// performed one at a time, in the order asked (`AMQPQueueDepths`, `AMQPQueueBindings`).
///
/// While the broker is unreachable an operation fails at once with `.notConnected`, and the thread reconnects with
/// backoff. An operation the broker refuses (`.refused`) fails alone; any other failure drops the connection and fails
/// the operations waiting behind it too.
final class OnDemandConnection: Sendable {
    private struct Request: Sendable {
        /// Performs the operation and answers its caller; throws (without answering) when the operation failed.
        var perform: @Sendable (AMQPWireConnection) throws(AMQPError) -> Void
        var fail: @Sendable (any Error) -> Void
    }

    private struct SharedState {
        var inbox: [Request] = []
        var connected = false
        var stopping = false
    }

    private let configuration: AMQPConfiguration
    private let logger: Logger
    /// What the logs call this connection, e.g. "queue-depth reader".
    private let role: String
    /// The thread's name as the OS shows it (at most 15 bytes are kept).
    private let threadName: String
    private let thread = ConnectionThread()
    private let shared = Mutex<SharedState>(SharedState())

    init(configuration: AMQPConfiguration, logger: Logger, role: String, threadName: String) {
        self.configuration = configuration
        self.logger = logger
        self.role = role
        self.threadName = threadName
    }

    /// Whether the connection is up.
    var isConnected: Bool { shared.withLock { $0.connected } }

    /// Performs `operation` on the connection thread and answers what it returned. Throws `AMQPError`.
    func perform<Value: Sendable>(_ operation: @escaping @Sendable (AMQPWireConnection) throws(AMQPError) -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
            let request = Request(
                perform: { connection throws(AMQPError) in continuation.resume(returning: try operation(connection)) },
                fail: { continuation.resume(throwing: $0) })
            let refusal: AMQPError? = shared.withLock { state in
                if state.stopping { return AMQPError(code: .shutdown, message: "the AMQP \(role) is shutting down") }
                if !state.connected { return AMQPError(code: .notConnected, message: "not connected to the broker") }
                state.inbox.append(request)
                return nil
            }
            if let refusal {
                continuation.resume(throwing: refusal)
            } else {
                thread.wake()
            }
        }
    }

    /// Connects and performs operations until graceful shutdown.
    func run() async {
        thread.start(name: threadName) { [self] in threadMain() }
        try? await gracefulShutdown()
        shared.withLock { $0.stopping = true }
        thread.wake()
        await thread.waitUntilFinished()
    }

    // MARK: The connection thread

    private func threadMain() {
        thread.runConnections(
            configuration: configuration, logger: logger, role: role,
            isStopping: { shared.withLock { $0.stopping } },
            prepare: { _ in },
            onConnected: { _ in shared.withLock { $0.connected = true } },
            serve: serve,
            onDisconnected: {
                let waiting = shared.withLock { state in
                    state.connected = false
                    defer { state.inbox = [] }
                    return state.inbox
                }
                for request in waiting {
                    request.fail(AMQPError(code: .notConnected, message: "the connection dropped"))
                }
            })
    }

    private func serve(_ connection: AMQPWireConnection) throws(AMQPError) {
        let idleWait = Int32(max(configuration.heartbeatSeconds, 1) * 250)
        while true {
            let (requests, stopping) = shared.withLock { state in
                defer { state.inbox = [] }
                return (state.inbox, state.stopping)
            }
            for (index, request) in requests.enumerated() {
                do {
                    try request.perform(connection)
                } catch where error.code == .refused {
                    request.fail(error)
                } catch {
                    // The connection is no longer usable: this operation and those after it fail, and it is dropped.
                    for failed in requests[index...] { failed.fail(error) }
                    throw error
                }
            }
            if stopping { return }
            // Nothing else is expected on the channel; reading sends and checks heartbeats.
            while try connection.nextEvent() != nil {}
            if connection.hasBufferedInput { continue }
            thread.wait(socket: connection.socketDescriptor, timeoutMilliseconds: idleWait)
        }
    }
}
