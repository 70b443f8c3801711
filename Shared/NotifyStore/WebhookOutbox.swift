import Foundation
import Logging
import NotifyDatabase
import NotifyModels
import PostgresNIO

/// Records webhook events in the same transaction as the change that causes them (the outbox `webhook_events`), for
/// the apps whose webhook takes that type; `WebhookRelay` publishes them to `webhooks.deliveries` in order. Recording
/// any announces them on `StoreChannel.webhookEvents`, which PostgreSQL delivers when the transaction commits.
struct WebhookOutbox {
    let connection: PostgresConnection
    let logger: Logger

    /// What an event says of one subscription: its `data` object.
    struct Subject {
        var appId: String
        var userId: String
        var subscriptionId: UUID
        var platform: String? = nil
        var eventSource: String? = nil
        var reason: String? = nil

        var json: String {
            var object: [String: String] = ["subscriptionId": subscriptionId.lowercasedString, "userId": userId]
            if let platform { object["platform"] = platform }
            if let eventSource { object["eventSource"] = eventSource }
            if let reason { object["reason"] = reason }
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
            return String(decoding: data, as: UTF8.self)
        }
    }

    func record(_ type: WebhookEventType, _ subjects: [Subject]) async throws {
        guard !subjects.isEmpty else { return }
        try await connection.query(
            """
            WITH recorded AS (
                INSERT INTO webhook_events (event_id, app_id, type, data, created_at)
                SELECT gen_random_uuid(), e.app, \(type.rawValue), e.data::jsonb, now()
                FROM unnest(\(ArrayParameter(subjects.map(\.appId)))::text[], \(ArrayParameter(subjects.map(\.json)))::text[]) WITH ORDINALITY AS e(app, data, ord)
                WHERE EXISTS (SELECT 1 FROM app_webhooks w WHERE w.app_id = e.app AND \(type.rawValue) = ANY(w.events))
                ORDER BY e.ord
                RETURNING 1
            )
            SELECT pg_notify(\(StoreChannel.webhookEvents), '') WHERE EXISTS (SELECT 1 FROM recorded)
            """, logger: logger)
    }
}
