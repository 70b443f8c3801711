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
    private let publisher: AMQPPublisher
    private let logger: Logger
    private let interval: Duration = .milliseconds(200)
    private let fallbackInterval: Duration = .seconds(5)
    private let pageSize = 200
    private let announced = AnnouncedWork()

    init(client: PostgresClient, publisher: AMQPPublisher, logger: Logger) {
        self.client = client
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
        try await client.withTransaction(logger: logger) { connection in
            var deliveries: [WebhookDelivery] = []
            let rows = try await connection.query(
                """
                SELECT event_id, app_id, type, data::text, created_at FROM webhook_events WHERE published_at IS NULL
                ORDER BY seq LIMIT \(pageSize) FOR UPDATE SKIP LOCKED
                """, logger: logger)
            for try await (id, appId, type, data, created) in rows.decode((UUID, String, String, String, Date).self) {
                deliveries.append(WebhookDelivery(eventId: id, appId: appId, type: type, data: Data(data.utf8), createdAt: created))
            }
            guard !deliveries.isEmpty else { return 0 }
            try await publisher.publish(deliveries.map { AMQPOutboundMessage(routingKey: WebhookDelivery.queue, wire: $0) })
            try await connection.query(
                "UPDATE webhook_events SET published_at = now() WHERE event_id = ANY(\(ArrayParameter(deliveries.map(\.eventId)))::uuid[])",
                logger: logger)
            return deliveries.count
        }
    }
}

/// Writes each attempt push-dispatch reports on `webhooks.outcomes` to the webhook delivery log.
struct WebhookOutcomeHandler: Sendable {
    let client: PostgresClient
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
        let recorded = await RetryUntilShutdown.succeeded("record webhook outcomes", logger: logger) {
            try await client.query(
                """
                INSERT INTO webhook_deliveries (event_id, attempt, app_id, type, status, result, reason, at)
                SELECT * FROM unnest(\(ArrayParameter(outcomes.map(\.eventId)))::uuid[], \(ArrayParameter(outcomes.map { Int32($0.attempt) }))::int4[],
                                     \(ArrayParameter(outcomes.map(\.appId)))::text[], \(ArrayParameter(outcomes.map(\.type)))::text[],
                                     \(ArrayParameter(outcomes.map { Int32($0.status ?? 0) }))::int4[], \(ArrayParameter(outcomes.map(\.result)))::text[],
                                     \(ArrayParameter(outcomes.map { $0.reason ?? "" }))::text[], \(ArrayParameter(outcomes.map(\.at)))::timestamptz[])
                ON CONFLICT DO NOTHING
                """, logger: logger)
        }
        if !recorded { return RetryUntilShutdown.requeueing(dispositions) }
        return dispositions
    }
}
