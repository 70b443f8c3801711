import Logging
import ServiceLifecycle
import Synchronization

/// Reads how many messages are ready in queues, with passive declares (nothing is created), on a connection of its own
/// owned by a dedicated thread.
///
/// The broker answers from the queue itself, so a figure is current (its management API lists queues from statistics
/// refreshed every `collect_statistics_interval`, 5 s by default), and no management API is needed. For the broker a
/// passive declare of a quorum queue is not cheap: six of them a second cost an idle RabbitMQ 3.10 about as much CPU as
/// one listing of the management API a second, 2-4 ms (BENCHMARKS.md, twenty-fifth session). While the broker is
/// unreachable, `depths` fails at once with `.notConnected`, and the thread reconnects with backoff.
public final class AMQPQueueDepths: Service, Sendable {
    private let configuration: AMQPConfiguration
    private let logger: Logger
    private let thread = ConnectionThread()
    private let shared = Mutex<SharedState>(SharedState())

    private struct SharedState {
        var inbox: [Request] = []
        var connected = false
        var stopping = false
    }

    private struct Request {
        var queues: [String]
        var continuation: CheckedContinuation<[String: Int], any Error>
    }

    public init(configuration: AMQPConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// Whether the connection is up.
    public var isConnected: Bool { shared.withLock { $0.connected } }

    /// The messages ready in each of `queues` that exists (a missing queue is left out). Throws `AMQPError`.
    public func depths(of queues: [String]) async throws -> [String: Int] {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[String: Int], any Error>) in
            let refusal: AMQPError? = shared.withLock { state in
                if state.stopping { return AMQPError(code: .shutdown, message: "the queue-depth reader is shutting down") }
                if !state.connected { return AMQPError(code: .notConnected, message: "not connected to the broker") }
                state.inbox.append(Request(queues: queues, continuation: continuation))
                return nil
            }
            if let refusal {
                continuation.resume(throwing: refusal)
            } else {
                thread.wake()
            }
        }
    }

    /// Connects and answers reads until graceful shutdown.
    public func run() async throws {
        thread.start(name: "amqp-depths") { [self] in threadMain() }
        try? await gracefulShutdown()
        shared.withLock { $0.stopping = true }
        thread.wake()
        await thread.waitUntilFinished()
    }

    // MARK: The connection thread

    private func threadMain() {
        thread.runConnections(
            configuration: configuration, logger: logger, role: "queue-depth reader",
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
                    request.continuation.resume(throwing: AMQPError(code: .notConnected, message: "the connection dropped"))
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
                    var depths: [String: Int] = [:]
                    for queue in request.queues {
                        if let depth = try connection.readyMessageCount(of: queue) { depths[queue] = depth }
                    }
                    request.continuation.resume(returning: depths)
                } catch {
                    // The connection is no longer usable: this read and those after it fail, and it is dropped.
                    for failed in requests[index...] { failed.continuation.resume(throwing: error) }
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
