import Foundation
import Logging
import Metrics
import NotifyAMQP
import NotifyModels
import NotifyRuntime
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
        for (index, delivery) in deliveries.enumerated() {
            do {
                outcomes += try PushOutcomeBatch(decodingJSON: delivery.body).outcomes
            } catch {
                dispositions[index] = .deadLetter(reason: "not a push-outcome batch: \(error)")
            }
        }
        let done = await RetryUntilShutdown.succeeded("record push feedback", logger: logger) { try await record(outcomes) }
        return done ? dispositions : RetryUntilShutdown.requeueing(dispositions)
    }

    private func record(_ outcomes: [PushOutcome]) async throws {
        guard !outcomes.isEmpty else { return }
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query(
                """
                INSERT INTO delivery_log (push_id, attempt, result, app_id, notification_id, subscription_id, sequence, platform, status, reason, at)
                SELECT id, attempt, result, app, notification, subscription, seq, platform, NULLIF(status, 0), NULLIF(reason, ''), at
                FROM unnest(\(outcomes.map(\.pushId))::uuid[], \(outcomes.map { Int32($0.attempt) })::int4[], \(outcomes.map(\.result.rawValue))::text[],
                            \(outcomes.map(\.appId))::text[], \(outcomes.map(\.notificationId))::uuid[], \(outcomes.map(\.subscriptionId))::uuid[],
                            \(outcomes.map(\.sequence))::int8[], \(outcomes.map(\.platform.rawValue))::text[], \(outcomes.map { Int32($0.status ?? 0) })::int4[],
                            \(outcomes.map { $0.reason ?? "" })::text[], \(outcomes.map(\.at))::timestamptz[])
                     AS t(id, attempt, result, app, notification, subscription, seq, platform, status, reason, at)
                ON CONFLICT DO NOTHING
                """, logger: logger)

            let invalid = outcomes.filter { $0.result == .tokenInvalid }
            if !invalid.isEmpty {
                let rows = try await connection.query(
                    """
                    DELETE FROM subscriptions s
                    USING unnest(\(invalid.map(\.subscriptionId))::uuid[], \(invalid.map { $0.invalidSince ?? $0.at })::timestamptz[]) AS v(id, since)
                    WHERE s.subscription_id = v.id AND s.registered_at < v.since
                    RETURNING s.platform
                    """, logger: logger)
                var removed: [String: Int] = [:]
                for try await platform in rows.decode(String.self) { removed[platform, default: 0] += 1 }
                for (platform, count) in removed {
                    Counter(label: "notify_subscriptions_removed_total", dimensions: [("platform", platform)]).increment(by: count)
                }
                logger.info("removed subscriptions whose tokens the provider declared invalid", metadata: [
                    "removed": "\(removed.values.reduce(0, +))", "reported": "\(invalid.count)",
                ])
            }

            for refused in outcomes where refused.result == .credentialsRejected {
                let provider = refused.platform.provider.rawValue
                // Only credentials stored before the refusal are flagged (new ones may already have replaced them).
                let flagged = try await connection.query(
                    """
                    UPDATE app_credentials SET rejected_reason = \(refused.reason ?? "refused"), rejected_at = \(refused.at)
                    WHERE app_id = \(refused.appId) AND provider = \(provider) AND updated_at < \(refused.at)
                      AND rejected_reason IS NULL
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
