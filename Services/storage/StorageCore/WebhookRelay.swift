import Foundation
import Logging
import NotifyAMQP
import NotifyDatabase
import NotifyModels
import NotifyRuntime
import NotifyStore
import NotifyWire
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// Publishes the webhook events the outbox holds (`webhook_events`) to `webhooks.deliveries`, oldest first, and marks
/// them published once the broker confirmed them. The rows are locked while they are published, so two storage
/// instances never relay the same events; a crash before the mark relays them again (at least once, in order).
///
/// The relay sleeps until there are events: `WebhookOutbox` announces them on `StoreChannel.webhookEvents` when their transaction
/// commits, and the relay listens there. It still looks every `fallbackInterval` (for events another instance's relay
/// left behind when it failed), and every `interval` while it cannot listen or cannot publish.
final class WebhookRelay: Service {

    private let client: PostgresClient
    private let store: WebhookEventStore
    private let publisher: AMQPPublisher
    private let logger: Logger
    private let interval: Duration = .milliseconds(200)
    private let fallbackInterval: Duration = .seconds(5)
    private let pageSize = 200
    private let announced = AnnouncedWork()

    init(client: PostgresClient, publisher: AMQPPublisher, logger: Logger) {
        self.client = client
        self.store = WebhookEventStore(client: client, logger: logger)
        self.publisher = publisher
        self.logger = logger
    }

    func run() async throws {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.listen() }
            while !Task.isShuttingDownGracefully && !Task.isCancelled {
                var relayed = 0
                var failed = false
                do {
                    relayed = try await relayPage()
                } catch {
                    failed = true
                    logger.debug("could not relay webhook events; will try again", metadata: ["error": "\(error)"])
                }
                if relayed < pageSize {
                    await announced.pause(upTo: failed || !announced.isListening ? interval : fallbackInterval)
                }
            }
            group.cancelAll()
        }
    }

    /// Listens for announced work until cancelled.
    private func listen() async {
        await announced.listen(on: StoreChannel.webhookEvents, client: client, what: "webhook events", logger: logger)
    }

    /// Relays one page; answers how many events it held.
    private func relayPage() async throws -> Int {
        try await store.relayOldest(limit: pageSize) { deliveries in
            try await publisher.publish(deliveries.map { AMQPOutboundMessage(routingKey: WebhookDelivery.queue, wire: $0) })
        }
    }
}

/// Writes each attempt push-dispatch reports on `webhooks.outcomes` to the webhook delivery log.
struct WebhookOutcomeHandler: Sendable {
    let store: WebhookEventStore
    let logger: Logger

    func handle(_ deliveries: [AMQPDelivery]) async -> [AMQPDisposition] {
        var outcomes: [WebhookAttempt] = []
        var dispositions = [AMQPDisposition](repeating: .ack, count: deliveries.count)
        for (index, delivery) in deliveries.enumerated() {
            do {
                outcomes += try WebhookOutcomeBatch(delivery).outcomes
            } catch {
                dispositions[index] = .deadLetter(reason: "not a webhook outcome batch: \(error)")
            }
        }
        guard !outcomes.isEmpty else { return dispositions }
        // Tried again in place while the database does not answer (requeued at once, the outcomes would burn their
        // queue's delivery limit within seconds of an outage and be dead-lettered).
        let recorded = await RetryUntilShutdown.succeeded("record webhook outcomes", logger: logger) { try await store.recordAttempts(outcomes) }
        if !recorded { return RetryUntilShutdown.requeueing(dispositions) }
        return dispositions
    }
}
