import Foundation
import Logging
import NotifyDatabase
import NotifyModels
import PostgresNIO

/// Reads the delivery log: what became of each push of a notification, or of the app's every notification.
public protocol DeliveryLogStore: Sendable {
    /// What became of the pushes of one notification (`notificationId`), or of the app's every notification from `since`
    /// on: oldest first, `limit` at a time after `pageToken`'s page (`NotifyStoreError.invalidPageToken` for another).
    func deliveries(appId: String, notificationId: UUID?, since: Date?, limit: Int, pageToken: String?) async throws -> DeliveryPage

    /// How many pushes of the notification ended in each result, by provider: each push counted by its latest attempt.
    func deliverySummary(appId: String, notificationId: UUID) async throws -> DeliverySummary
}

/// The delivery log in `delivery_records` (storage writes a row per feedback message, each with many outcomes).
public struct PostgresDeliveryLogStore: DeliveryLogStore {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// What became of the pushes of one notification (`notificationId`), or of the app's every notification from
    /// `since` on: oldest first, `limit` at a time. Rows of the log that end before the page starts are not unpacked,
    /// so later pages of a large broadcast read less.
    public func deliveries(appId: String, notificationId: UUID?, since: Date?, limit: Int, pageToken: String?) async throws -> DeliveryPage {
        var bindings = PostgresBindings()
        bindings.append(appId)
        var sql = """
            SELECT DISTINCT ON (o.at, o.push_id, o.attempt, o.result)
                   d.notification_id, o.push_id, o.subscription_id, o.platform, o.sequence, o.attempt, o.result, NULLIF(o.status, 0),
                   NULLIF(o.reason, ''), o.at
            FROM delivery_records d,
                 unnest(d.push_ids, d.subscription_ids, d.platforms, d.sequences, d.attempts, d.results, d.statuses, d.reasons, d.ats)
                 AS o(push_id, subscription_id, platform, sequence, attempt, result, status, reason, at)
            WHERE d.app_id = $1
            """
        if let notificationId {
            bindings.append(notificationId)
            sql += " AND d.notification_id = $\(bindings.count)"
        }
        if let since {
            bindings.append(since)
            // A row's recorded_at is its latest outcome's time (delivery_records_by_app).
            sql += " AND d.recorded_at >= $\(bindings.count) AND o.at >= $\(bindings.count)"
        }
        if let pageToken {
            let after = try PageToken.decode(deliveryPosition: pageToken)
            let first = bindings.count + 1
            bindings.append(after.at)
            bindings.append(after.pushId)
            bindings.append(after.attempt)
            bindings.append(after.result)
            sql += " AND d.recorded_at >= $\(first) AND (o.at, o.push_id, o.attempt, o.result) > ($\(first), $\(first + 1), $\(first + 2), $\(first + 3))"
        }
        bindings.append(limit + 1)
        sql += " ORDER BY o.at, o.push_id, o.attempt, o.result LIMIT $\(bindings.count)"
        var records: [DeliveryRecord] = []
        var last: DeliveryPosition?
        var more = false
        let rows = try await client.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger)
        for try await (notification, pushId, subscription, platform, sequence, attempt, result, status, reason, at) in rows.decode(
            (UUID, UUID, UUID, String, Int64, Int32, String, Int32?, String?, Date).self)
        {
            guard records.count < limit else {
                more = true
                continue
            }
            records.append(DeliveryRecord(
                notificationId: notification, pushId: pushId, subscriptionId: subscription, platform: platform, sequence: sequence,
                attempt: Int(attempt), result: result, status: status.map(Int.init), reason: reason, at: at))
            last = DeliveryPosition(at: PostgresTimestamp(at), pushId: pushId, attempt: attempt, result: result)
        }
        return DeliveryPage(deliveries: records, nextPageToken: more ? last.map(PageToken.encode) : nil)
    }

    /// The statement that logs `outcomes`: a row per notification and feedback message (`keys`, one per outcome), its
    /// outcomes as parallel arrays; idempotent. Storage runs it alone or inside the transaction that acts on them.
    public static func recording(_ outcomes: [PushOutcome], keys: [UUID]) -> PostgresQuery {
        """
        INSERT INTO delivery_records (app_id, notification_id, record_key, recorded_at, push_ids, attempts, results,
                                      subscription_ids, sequences, platforms, statuses, reasons, ats)
        SELECT app, notification, key, max(at), array_agg(id), array_agg(attempt), array_agg(result), array_agg(subscription),
               array_agg(seq), array_agg(platform), array_agg(status), array_agg(reason), array_agg(at)
        FROM unnest(\(ArrayParameter(keys))::uuid[], \(ArrayParameter(outcomes.map(\.pushId)))::uuid[], \(ArrayParameter(outcomes.map { Int32($0.attempt) }))::int4[],
                    \(ArrayParameter(outcomes.map(\.result.rawValue)))::text[], \(ArrayParameter(outcomes.map(\.appId)))::text[], \(ArrayParameter(outcomes.map(\.notificationId)))::uuid[],
                    \(ArrayParameter(outcomes.map(\.subscriptionId)))::uuid[], \(ArrayParameter(outcomes.map(\.sequence)))::int8[], \(ArrayParameter(outcomes.map(\.platform.rawValue)))::text[],
                    \(ArrayParameter(outcomes.map { Int32($0.status ?? 0) }))::int4[], \(ArrayParameter(outcomes.map { $0.reason ?? "" }))::text[], \(ArrayParameter(outcomes.map(\.at)))::timestamptz[])
             AS t(key, id, attempt, result, app, notification, subscription, seq, platform, status, reason, at)
        GROUP BY app, notification, key
        ON CONFLICT DO NOTHING
        """
    }

    public func deliverySummary(appId: String, notificationId: UUID) async throws -> DeliverySummary {
        let rows = try await client.query(
            """
            WITH latest AS (
                SELECT DISTINCT ON (o.push_id) o.platform, o.result
                FROM delivery_records d, unnest(d.push_ids, d.platforms, d.results, d.attempts, d.ats) AS o(push_id, platform, result, attempt, at)
                WHERE d.app_id = \(appId) AND d.notification_id = \(notificationId)
                ORDER BY o.push_id, o.attempt DESC, o.at DESC
            )
            SELECT platform, result, count(*) FROM latest GROUP BY platform, result
            """, logger: logger)
        var summary = DeliverySummary(notificationId: notificationId, pushes: 0, byProvider: [:], byResult: [:])
        for try await (platform, result, count) in rows.decode((String, String, Int64).self) {
            summary.pushes += Int(count)
            summary.byProvider[platform, default: [:]][result] = Int(count)
            summary.byResult[result, default: 0] += Int(count)
        }
        return summary
    }
}
