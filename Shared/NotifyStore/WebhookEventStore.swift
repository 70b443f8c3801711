import Foundation
import Logging
import NotifyDatabase
import NotifyModels
import PostgresNIO

/// The webhook outbox (`webhook_events`) as storage's relay empties it, and the attempts log (`webhook_deliveries`).
public struct WebhookEventStore: Sendable {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Hands the oldest events not yet relayed (at most `limit`, locked: another relay skips them) to `relay`, and marks
    /// them relayed in the same transaction once it returns; answers how many. When `relay` throws, none is marked.
    public func relayOldest(limit: Int, _ relay: ([WebhookDelivery]) async throws -> Void) async throws -> Int {
        try await client.withTransaction(logger: logger) { connection in
            var deliveries: [WebhookDelivery] = []
            let rows = try await connection.query(
                """
                SELECT event_id, app_id, type, data::text, created_at FROM webhook_events WHERE published_at IS NULL
                ORDER BY seq LIMIT \(limit) FOR UPDATE SKIP LOCKED
                """, logger: logger)
            for try await (id, appId, type, data, created) in rows.decode((UUID, String, String, String, Date).self) {
                deliveries.append(WebhookDelivery(eventId: id, appId: appId, type: type, data: Data(data.utf8), createdAt: created))
            }
            guard !deliveries.isEmpty else { return 0 }
            try await relay(deliveries)
            try await connection.query(
                "UPDATE webhook_events SET published_at = now() WHERE event_id = ANY(\(ArrayParameter(deliveries.map(\.eventId)))::uuid[])",
                logger: logger)
            return deliveries.count
        }
    }

    /// Logs webhook attempts as push-dispatch reported them (an attempt reported twice is logged once).
    public func recordAttempts(_ outcomes: [WebhookAttempt]) async throws {
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
}
