import Foundation
import Logging
import Metrics
import NotifyAMQP
import NotifyDatabase
import NotifyModels
import NotifyRuntime
import NotifyStore
import NotifyWire
import PostgresNIO
import ServiceLifecycle

/// Consumes `push.feedback`: keeps the delivery log, removes device subscriptions whose token the provider
/// declared invalid (only if the device did not register again after the time the provider gives), and
/// flags app credentials the provider refused (deleting nothing).
struct FeedbackHandler: Sendable {
    let client: PostgresClient
    let logger: Logger

    func handle(_ deliveries: [AMQPDelivery]) async -> [AMQPDisposition] {
        var dispositions = [AMQPDisposition](repeating: .ack, count: deliveries.count)
        var outcomes: [PushOutcome] = []
        var recordKeys: [UUID] = []
        for (index, delivery) in deliveries.enumerated() {
            do {
                let batch = try PushOutcomeBatch(delivery).outcomes
                outcomes += batch
                recordKeys += Self.recordKeys(of: batch)
            } catch {
                dispositions[index] = .deadLetter(reason: "not a push-outcome batch: \(error)")
            }
        }
        let done = await RetryUntilShutdown.succeeded("record push feedback", logger: logger) { try await record(outcomes, keys: recordKeys) }
        return done ? dispositions : RetryUntilShutdown.requeueing(dispositions)
    }

    /// One key per outcome: the key of its row, which holds the outcomes of one message for one notification.
    private static func recordKeys(of outcomes: [PushOutcome]) -> [UUID] {
        let indicesByNotification = Dictionary(grouping: outcomes.indices) { NotificationKey(outcomes[$0]) }
        let keyByNotification = indicesByNotification.mapValues { indices in
            DeterministicID.deliveryRecordKey(of: indices.lazy.map { outcomes[$0] })
        }
        return outcomes.map { keyByNotification[NotificationKey($0)]! }
    }

    private struct NotificationKey: Hashable {
        var appId: String
        var notificationId: UUID

        init(_ outcome: PushOutcome) {
            appId = outcome.appId
            notificationId = outcome.notificationId
        }
    }

    /// Writes a row per notification and feedback message, its outcomes as parallel arrays: one row and one index
    /// entry for many pushes (a broadcast's million pushes make thousands of rows, not a million). The arrays are
    /// aggregated from the same rows in the same pass, so they stay aligned; their order does not matter (readers
    /// sort the outcomes by time), so no aggregate sorts.
    private func record(_ outcomes: [PushOutcome], keys: [UUID]) async throws {
        guard !outcomes.isEmpty else { return }
        let records = PostgresDeliveryLogStore.recording(outcomes, keys: keys)
        let invalid = outcomes.filter { $0.result == .tokenInvalid }
        let refusals = outcomes.filter { $0.result == .credentialsRejected }
        guard !invalid.isEmpty || !refusals.isEmpty else {
            // Most batches only log deliveries: one statement, its own transaction (one round trip rather than three).
            try await client.query(records, logger: logger)
            return
        }
        try await client.withTransactionOnEventLoop(logger: logger) { connection in
            try await connection.query(records, logger: logger)

            if !invalid.isEmpty {
                let rows = try await connection.query(
                    """
                    DELETE FROM subscriptions s
                    USING unnest(\(ArrayParameter(invalid.map(\.subscriptionId)))::uuid[], \(ArrayParameter(invalid.map { $0.invalidSince ?? $0.at }))::timestamptz[]) AS v(id, since)
                    WHERE s.subscription_id = v.id AND s.registered_at < v.since
                    RETURNING s.platform, s.app_id, s.user_id, s.subscription_id
                    """, logger: logger)
                var removed: [String: Int] = [:]
                var subjects: [WebhookOutbox.Subject] = []
                for try await (platform, appId, userId, subscriptionId) in rows.decode((String, String, String, UUID).self) {
                    removed[platform, default: 0] += 1
                    subjects.append(.init(appId: appId, userId: userId, subscriptionId: subscriptionId, platform: platform, reason: "tokenInvalid"))
                }
                try await WebhookOutbox(connection: connection, logger: logger).record(.subscriptionDeleted, subjects)
                for (platform, count) in removed {
                    Counter(label: "notify_subscriptions_removed_total", dimensions: [("platform", platform)]).increment(by: count)
                }
                logger.info("removed subscriptions whose tokens the provider declared invalid", metadata: [
                    "removed": "\(removed.values.reduce(0, +))", "reported": "\(invalid.count)",
                ])
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
                guard flagged > 0 else { continue }
                Counter(label: "notify_credentials_refused_total", dimensions: [("provider", provider)]).increment()
                logger.error("provider refused an app's credentials; pushes for it stop until new ones are stored", metadata: [
                    "appId": "\(refused.appId)", "provider": "\(provider)", "reason": "\(refused.reason ?? "-")",
                ])
            }
        }
    }
}
