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

/// What recording a feedback message did besides logging its outcomes.
public struct FeedbackEffects: Sendable {
    /// Outcomes that declared a token invalid.
    public var reportedInvalid = 0
    /// Subscriptions removed for it, by platform.
    public var removedSubscriptions: [String: Int] = [:]
    /// Credentials flagged as refused.
    public var refusedCredentials: [(appId: String, provider: String, reason: String?)] = []
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

    /// Writes `outcomes` to the delivery log (a row per notification and feedback message, `keys` one per outcome), and
    /// in the same transaction acts on them: removes the subscriptions whose token the provider declared invalid (unless
    /// registered again after the time the provider gives), recording `subscription.deleted` (reason `tokenInvalid`)
    /// for the apps' webhooks, and flags the app credentials a provider refused (deleting nothing). Answers what it did.
    ///
    /// One row and one index entry holds many pushes (a broadcast's million pushes make thousands of rows, not a
    /// million). The arrays are aggregated from the same rows in the same pass, so they stay aligned; their order does
    /// not matter (readers sort the outcomes by time), so no aggregate sorts.
    public func record(_ outcomes: [PushOutcome], keys: [UUID]) async throws -> FeedbackEffects {
        var effects = FeedbackEffects()
        guard !outcomes.isEmpty else { return effects }
        let records = Self.recording(outcomes, keys: keys)
        let invalid = outcomes.filter { $0.result == .tokenInvalid }
        let refusals = outcomes.filter { $0.result == .credentialsRejected }
        guard !invalid.isEmpty || !refusals.isEmpty else {
            // Most batches only log deliveries: one statement, its own transaction (one round trip rather than three).
            try await client.query(records, logger: logger)
            return effects
        }
        effects.reportedInvalid = invalid.count
        try await client.withTransactionOnEventLoop(logger: logger) { connection in
            try await connection.query(records, logger: logger)
            if !invalid.isEmpty {
                // With each subscription, its memberships, read in the statement's snapshot before the delete cascades.
                let rows = try await connection.query(
                    """
                    WITH gone AS (
                        DELETE FROM subscriptions s
                        USING unnest(\(ArrayParameter(invalid.map(\.subscriptionId)))::uuid[], \(ArrayParameter(invalid.map { $0.invalidSince ?? $0.at }))::timestamptz[]) AS v(id, since)
                        WHERE s.subscription_id = v.id AND s.registered_at < v.since
                        RETURNING s.platform, s.app_id, s.user_id, s.subscription_id
                    )
                    SELECT g.platform, g.app_id, g.user_id, g.subscription_id, m.event_source, m.joined_at
                    FROM gone g LEFT JOIN event_source_members m USING (subscription_id)
                    """, logger: logger)
                var subjects: [WebhookOutbox.Subject] = []
                var ended: [BroadcastRemoval.EndedMembership] = []
                var removed = Set<UUID>()
                for try await (platform, appId, userId, subscriptionId, source, joinedAt) in rows.decode(
                    (String, String, String, UUID, String?, Date?).self)
                {
                    if let source, let joinedAt { ended.append(.init(appId: appId, userId: userId, eventSource: source, joinedAt: joinedAt)) }
                    guard removed.insert(subscriptionId).inserted else { continue }
                    effects.removedSubscriptions[platform, default: 0] += 1
                    subjects.append(.init(appId: appId, userId: userId, subscriptionId: subscriptionId, platform: platform, reason: "tokenInvalid"))
                }
                try await WebhookOutbox(connection: connection, logger: logger).record(.subscriptionDeleted, subjects)
                // The broadcasts the users' feeds lost are logged for their other devices' next sync (this path emits no
                // change events: nothing is pushed for them).
                _ = try await BroadcastRemoval(connection: connection, logger: logger).write(ended, at: Date())
            }
            for refused in refusals {
                let provider = refused.platform.provider.rawValue
                // Only credentials stored before the refusal are flagged (new ones may already have replaced them): those
                // of the device's app identity if the app has some for it, else its default ones.
                let flagged = try await connection.query(
                    """
                    UPDATE app_credentials SET rejected_reason = \(refused.reason ?? "refused"), rejected_at = \(refused.at)
                    WHERE app_id = \(refused.appId) AND provider = \(provider) AND updated_at < \(refused.at)
                      AND rejected_reason IS NULL
                      AND app_package = coalesce((
                          SELECT s.app_package FROM subscriptions s
                          WHERE s.subscription_id = \(refused.subscriptionId) AND EXISTS (
                              SELECT 1 FROM app_credentials x
                              WHERE x.app_id = \(refused.appId) AND x.provider = \(provider) AND x.app_package = s.app_package)), '')
                    RETURNING app_id
                    """, logger: logger).collect().count
                if flagged > 0 { effects.refusedCredentials.append((refused.appId, provider, refused.reason)) }
            }
        }
        return effects
    }

    /// The statement that logs `outcomes`: a row per notification and feedback message (`keys`, one per outcome), its
    /// outcomes as parallel arrays; idempotent. Storage runs it alone or inside the transaction that acts on them.
    static func recording(_ outcomes: [PushOutcome], keys: [UUID]) -> PostgresQuery {
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
