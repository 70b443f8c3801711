import Foundation
import Logging
import NotifyAMQP
import NotifyModels
import ServiceLifecycle

/// Takes batches of push-job messages from `push.apns`, sends every job concurrently (bounded),
/// logs each outcome, and lets the consumer ack once every job has an outcome.
///
/// Transient failures (unreachable, 429, 5xx) are retried here a few times with backoff;
/// retries through delay queues, dead letters and token feedback belong to the provider issue.
struct APNsDispatchHandler: Sendable {
    let client: APNsClient
    let credentials: CredentialStore
    let concurrency: Int
    let logger: Logger
    var attempts = 4

    func handle(_ deliveries: [AMQPDelivery]) async -> [AMQPDisposition] {
        var dispositions = [AMQPDisposition](repeating: .ack, count: deliveries.count)
        var jobs: [PushJob] = []
        let decoder = WireCoding.makeDecoder()
        for (index, delivery) in deliveries.enumerated() {
            do {
                jobs.append(contentsOf: try decoder.decode(PushJobBatch.self, from: delivery.body).jobs)
            } catch {
                dispositions[index] = .deadLetter(reason: "not a push-job batch: \(error)")
            }
        }
        await withTaskGroup(of: Void.self) { group in
            var running = 0
            for job in jobs {
                if running >= concurrency {
                    await group.next()
                    running -= 1
                }
                group.addTask { await deliver(job) }
                running += 1
            }
        }
        return dispositions
    }

    private func deliver(_ job: PushJob) async {
        var delay = Duration.milliseconds(250)
        for attempt in 1...attempts {
            let outcome: APNsClient.Outcome
            do {
                guard let appCredentials = try await credentials.apns(appId: job.appId) else {
                    logger.error("no APNs credentials for the app; push dropped", metadata: metadata(job, ["outcome": "no-credentials"]))
                    return
                }
                outcome = await client.send(job, credentials: appCredentials)
            } catch {
                outcome = .unreachable("credentials lookup failed: \(error)")
            }
            switch outcome {
            case .accepted(let apnsId):
                logger.debug("push accepted", metadata: metadata(job, ["outcome": "accepted", "apnsId": "\(apnsId)"]))
                return
            case .rejected(let status, let reason, let retryAfter) where !outcome.isRetryable || attempt == attempts:
                logger.warning("push failed", metadata: metadata(job, ["outcome": "failed", "status": "\(status)", "reason": "\(reason)", "retryAfter": "\(retryAfter.map(String.init) ?? "-")"]))
                return
            case .unreachable(let reason) where attempt == attempts:
                logger.warning("push failed", metadata: metadata(job, ["outcome": "unreachable", "reason": "\(reason)"]))
                return
            case .rejected(_, _, let retryAfter):
                logger.info("push will be retried", metadata: metadata(job, ["outcome": "retry", "attempt": "\(attempt)"]))
                if let retryAfter { delay = max(delay, .seconds(min(retryAfter, 30))) }
            case .unreachable:
                logger.info("provider unreachable; push will be retried", metadata: metadata(job, ["outcome": "retry", "attempt": "\(attempt)"]))
            }
            if Task.isShuttingDownGracefully { return }
            try? await Task.sleep(for: delay * Double.random(in: 0.8...1.2))
            delay = delay * 2
        }
    }

    private func metadata(_ job: PushJob, _ extra: Logger.Metadata) -> Logger.Metadata {
        var metadata: Logger.Metadata = [
            "appId": "\(job.appId)", "notificationId": "\(job.notificationId)", "sequence": "\(job.sequence)",
            "subscriptionId": "\(job.subscriptionId)", "pushId": "\(job.pushId)",
        ]
        metadata.merge(extra) { $1 }
        return metadata
    }
}
