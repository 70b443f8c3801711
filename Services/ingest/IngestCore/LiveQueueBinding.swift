import Foundation
import Logging
import NotifyBrokerAdmin
import NotifyModels
import Synchronization

/// Binds this instance's live queue to `notify.changes` only while the instance holds live streams, through RabbitMQ's
/// management API, so that an instance without streams (the usual case) is not sent every change batch: each batch
/// storage publishes would otherwise be queued, delivered and acknowledged once per ingest instance for nothing.
///
/// The queue is bound when the consumer declares it (at start and after every reconnect); `unbind()` takes the binding
/// away once the hub has been idle a while, and `bind()` puts it back before a new stream reads its first changes, so
/// a change committed after that read is always routed here. The calls run one after another, in the order asked:
/// a bind asked while an unbind is under way is made after it.
final class LiveQueueBinding: Sendable {
    private let administration: RabbitMQManagementClient
    private let bindingPath: String
    private let logger: Logger
    /// Whether this instance took the binding away (and has not put it back); the last call asked, to chain the next.
    private let state = Mutex<(unbound: Bool, last: Task<Void, Never>?)>((false, nil))

    init(administration: RabbitMQManagementClient, virtualHost: String, queue: String, logger: Logger) {
        self.administration = administration
        bindingPath = "/api/bindings/\(RabbitMQManagementClient.segment(virtualHost))/e/\(RabbitMQManagementClient.segment(QueueNames.changesExchange))"
            + "/q/\(RabbitMQManagementClient.segment(queue))"
        self.logger = logger
    }

    /// Binds the queue again if this instance took the binding away; throws when the management API refuses.
    func bind() async throws {
        try await serially { [self] in
            guard state.withLock({ $0.unbound }) else { return }
            _ = try await administration.request(.POST, bindingPath, body: Data(#"{"routing_key":""}"#.utf8), doing: "bind the live queue")
            state.withLock { $0.unbound = false }
            logger.debug("live queue bound: a stream is open")
        }
    }

    /// Takes the binding away if `isIdle` still holds when its turn comes (a binding already gone is fine).
    func unbind(if isIdle: @escaping @Sendable () -> Bool) async throws {
        try await serially { [self] in
            guard isIdle() else { return }
            do {
                // "~": the binding with an empty routing key and no arguments.
                _ = try await administration.request(.DELETE, bindingPath + "/~", doing: "unbind the live queue")
            } catch let error as BrokerAdminError where error.code == .refused(status: 404) {}
            state.withLock { $0.unbound = true }
        }
    }

    /// Runs `operation` after every operation asked before it has finished.
    private func serially(_ operation: @escaping @Sendable () async throws -> Void) async throws {
        let task = state.withLock { state -> Task<Void, any Error> in
            let previous = state.last
            let task = Task<Void, any Error> {
                await previous?.value
                try await operation()
            }
            state.last = Task { _ = try? await task.value }
            return task
        }
        try await task.value
    }
}
