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
    let store: PostgresDeliveryLogStore
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

    /// Writes the outcomes to the delivery log and acts on them (`PostgresDeliveryLogStore.record`), then counts and
    /// logs what that did.
    private func record(_ outcomes: [PushOutcome], keys: [UUID]) async throws {
        let effects = try await store.record(outcomes, keys: keys)
        if effects.reportedInvalid > 0 {
            for (platform, count) in effects.removedSubscriptions {
                Counter(label: "notify_subscriptions_removed_total", dimensions: [("platform", platform)]).increment(by: count)
            }
            logger.info("removed subscriptions whose tokens the provider declared invalid", metadata: [
                "removed": "\(effects.removedSubscriptions.values.reduce(0, +))", "reported": "\(effects.reportedInvalid)",
            ])
        }
        for refused in effects.refusedCredentials {
            Counter(label: "notify_credentials_refused_total", dimensions: [("provider", refused.provider)]).increment()
            logger.error("provider refused an app's credentials; pushes for it stop until new ones are stored", metadata: [
                "appId": "\(refused.appId)", "provider": "\(refused.provider)", "reason": "\(refused.reason ?? "-")",
            ])
        }
    }

}
