import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// Publishes with publisher confirms on a connection owned by its own thread.
///
/// `publish` returns only once the broker confirmed every message (for quorum queues: replicated
/// and written to disk). A nack, a `basic.return` of the mandatory message, or a connection that drops
/// first is an error, never a silent success. Calls from many tasks are pipelined on one channel,
/// so concurrent publishers share the broker's confirm batches. While the broker is unreachable,
/// `publish` fails at once with `.notConnected` and the thread reconnects with backoff, declaring
/// the topology again. With a `confirmTimeout`, a publish whose confirm has not come by then fails with
/// `.confirmTimeout` (checked about once a second): a broker under a memory or disk alarm blocks its publishers
/// and confirms nothing until the alarm clears. Such a message may still be stored; the caller must treat it as
/// unknown, never as refused.
public final class AMQPPublisher: MessagePublisher, Service {
    private let configuration: AMQPConfiguration
    private let topology: AMQPTopology
    private let confirmTimeout: Duration?
    private let logger: Logger
    private let thread = ConnectionThread()
    private let shared = Mutex(PublisherStateMachine<PublishRequest>())

    private struct PublishRequest {
        var messages: [AMQPOutboundMessage]
        var continuation: CheckedContinuation<Void, any Error>
    }

    public init(configuration: AMQPConfiguration, topology: AMQPTopology = AMQPTopology(), confirmTimeout: Duration? = nil, logger: Logger) {
        self.configuration = configuration
        self.topology = topology
        self.confirmTimeout = confirmTimeout
        self.logger = logger
    }

    /// Whether the connection is up (for health checks).
    public var isConnected: Bool { shared.withLock { $0.isConnected } }

    /// Publishes the messages and waits for the broker's confirms. Throws `AMQPError`.
    public func publish(_ messages: [AMQPOutboundMessage]) async throws {
        guard !messages.isEmpty else { return }
        var messages = messages
        for index in messages.indices where messages[index].properties.messageId == nil {
            messages[index].properties.messageId = PublishedMessageID.next()
        }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            switch shared.withLock({ $0.publish(PublishRequest(messages: messages, continuation: continuation)) }) {
            case .wakeThread: thread.wake()
            case .refuse(let refusal): continuation.resume(throwing: refusal)
            }
        }
    }

    /// Connects and serves publishes until graceful shutdown; in-flight confirms are awaited before closing.
    public func run() async throws {
        startIfNeeded()
        try? await gracefulShutdown()
        shared.withLock { $0.stop() }
        thread.wake()
        await thread.waitUntilFinished()
    }

    /// Starts the connection thread without waiting for shutdown (for use outside a ServiceGroup).
    public func startIfNeeded() {
        if shared.withLock({ $0.start() }) {
            thread.start(name: "amqp-out") { [self] in threadMain() }
        }
    }

    /// Stops a publisher started with `startIfNeeded`.
    public func shutdown() async {
        shared.withLock { $0.stop() }
        thread.wake()
        await thread.waitUntilFinished()
    }

    /// Waits until connected or the timeout passes; returns whether it is connected.
    public func waitUntilConnected(timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if isConnected { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return isConnected
    }

    // MARK: The connection thread

    private func threadMain() {
        var session = ConfirmTracker()
        thread.runConnections(
            configuration: configuration, logger: logger, role: "publisher",
            isStopping: { shared.withLock { $0.isStopping } },
            prepare: { connection throws(AMQPError) in
                try connection.declare(topology)
                try connection.enablePublisherConfirms()
            },
            onConnected: { _ in
                session = ConfirmTracker()
                shared.withLock { $0.connected() }
            },
            serve: { connection throws(AMQPError) in try serve(connection, &session) },
            onDisconnected: {
                // Marked disconnected before anyone waiting is failed, so a caller that retries at once is
                // refused rather than queued on the dead connection.
                let waiting = shared.withLock { $0.disconnected() }
                session.failAll(AMQPError(code: .connectionLost, message: "the connection dropped before the broker confirmed"))
                for request in waiting {
                    request.continuation.resume(throwing: AMQPError(code: .notConnected, message: "the connection dropped"))
                }
            })
    }

    /// Publishes what arrives and matches confirms to requests until told to stop.
    private func serve(_ connection: AMQPWireConnection, _ session: inout ConfirmTracker) throws(AMQPError) {
        let idleWait = Int32(max(configuration.heartbeatSeconds, 1) * 250)
        while true {
            let (requests, stopping) = shared.withLock { $0.takeInbox() }
            // Track every request taken from the inbox before writing any of them: if a write throws,
            // `failAll` must resume them all (the ones not tracked would wait forever).
            let now = ContinuousClock.now
            for request in requests {
                session.add(messages: request.messages, continuation: request.continuation, at: now)
            }
            for request in requests {
                for message in request.messages {
                    try connection.publish(message)
                }
            }
            while let event = try connection.nextEvent() {
                switch event {
                case .ack(let tag, let multiple): session.settle(tag: tag, multiple: multiple, failure: nil)
                case .nack(let tag, let multiple):
                    session.settle(tag: tag, multiple: multiple, failure: AMQPError(code: .nacked, message: "the broker refused the message"))
                case .returned(let messageId, let reason): session.markReturned(messageId: messageId, reason: reason)
                case .delivery: break
                }
            }
            if let confirmTimeout { session.failUnconfirmed(sentBefore: .now - confirmTimeout, after: confirmTimeout) }
            if stopping && session.isEmpty && shared.withLock({ $0.inboxIsEmpty }) { return }
            if connection.hasBufferedInput { continue }
            thread.wait(socket: connection.socketDescriptor, timeoutMilliseconds: session.isEmpty ? idleWait : 1000)
        }
    }
}
