import Foundation
import Logging
import NotifyAMQP
import NotifyModels
import ServiceLifecycle

/// Takes batches of push-job messages from `push.apns`, sends every job concurrently (bounded), and before
/// the consumer acks, publishes (with confirms) what follows from each answer: transient failures to a delay
/// queue for another attempt, hopeless ones to `push.apns.dead` with the reason, and every outcome to
/// `push.feedback` (storage removes invalid tokens, flags refused credentials, keeps the delivery log).
struct APNsDispatchHandler: Sendable {
    let client: APNsClient
    let credentials: CredentialStore
    let publisher: AMQPPublisher
    let retryPolicy: RetryPolicy
    let concurrency: Int
    let logger: Logger

    private struct Attempt: Sendable {
        var job: PushJob
        var action: APNsAnswerClassifier.Action
        var status: Int?
        var reason: String?
    }

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
        let attempts = await send(jobs)
        var delay = Duration.milliseconds(100)
        while true {
            do {
                try await publisher.publish(try consequences(of: attempts))
                return dispositions
            } catch {
                logger.warning("could not publish push outcomes; retrying", metadata: ["error": "\(error)"])
            }
            if Task.isCancelled || Task.isShuttingDownGracefully {
                // Unacked, the jobs come back and are sent again: repeats carry the same apns-id and collapse id.
                return dispositions.map { $0 == .ack ? .requeue : $0 }
            }
            try? await Task.sleep(for: delay)
            delay = min(delay * 2, .seconds(5))
        }
    }

    private func send(_ jobs: [PushJob]) async -> [Attempt] {
        await withTaskGroup(of: Attempt.self, returning: [Attempt].self) { group in
            var results: [Attempt] = []
            results.reserveCapacity(jobs.count)
            var running = 0
            for job in jobs {
                if running >= concurrency, let result = await group.next() {
                    results.append(result)
                    running -= 1
                }
                group.addTask { await attempt(job) }
                running += 1
            }
            for await result in group { results.append(result) }
            return results
        }
    }

    private func attempt(_ job: PushJob) async -> Attempt {
        let stored: CredentialStore.Entry?
        do {
            stored = try await credentials.apns(appId: job.appId)
        } catch {
            return Attempt(job: job, action: .retry(after: nil), status: nil, reason: "credentials lookup failed")
        }
        guard let stored else { return Attempt(job: job, action: .fail, status: nil, reason: "the app has no APNs credentials") }
        if let refusal = stored.rejectedReason {
            return Attempt(job: job, action: .fail, status: 403, reason: "the app's APNs credentials were refused (\(refusal)); store new ones")
        }
        var answer = await client.send(job, credentials: stored.credentials)
        var action = APNsAnswerClassifier.classify(answer)
        if action == .credentials, client.signer.invalidate(teamId: stored.credentials.teamId, keyId: stored.credentials.keyId) {
            // Refresh the provider token once (on a new connection, so no connection sees the token change).
            client.connections.reset(teamId: stored.credentials.teamId, keyId: stored.credentials.keyId, baseURL: stored.credentials.baseURL)
            answer = await client.send(job, credentials: stored.credentials)
            action = APNsAnswerClassifier.classify(answer)
        }
        switch answer {
        case .accepted: return Attempt(job: job, action: action, status: 200, reason: nil)
        case .rejected(let status, let reason, _, _): return Attempt(job: job, action: action, status: status, reason: reason)
        case .unreachable(let reason): return Attempt(job: job, action: action, status: nil, reason: reason)
        }
    }

    /// The retry, dead-letter and feedback messages that follow from the attempts.
    private func consequences(of attempts: [Attempt]) throws -> [AMQPOutboundMessage] {
        let now = Date()
        var outcomes: [PushOutcome] = []
        var retries: [String: (wait: Int, jobs: [PushJob])] = [:]
        var dead: [(job: PushJob, reason: String)] = []
        for attempt in attempts {
            var job = attempt.job
            let result: PushOutcome.Result
            var invalidSince: Date?
            switch attempt.action {
            case .accepted:
                result = .accepted
            case .tokenInvalid(let since):
                result = .tokenInvalid
                invalidSince = since ?? now
            case .credentials:
                result = .credentialsRejected
                dead.append((job, "APNs refused the provider token: \(attempt.reason ?? "")"))
                logger.error("APNs refused the app's provider token; its credentials are flagged", metadata: ["appId": "\(job.appId)"])
            case .fail:
                result = .failed
                dead.append((job, attempt.reason ?? "failed"))
            case .retry(let after):
                if let next = retryPolicy.nextAttempt(after: job.attempt, retryAfterSeconds: after) {
                    result = .retrying
                    job.attempt = next.attempt
                    let queue = retryPolicy.queueName(job.platform, delay: next.delay)
                    retries[queue, default: (next.wait, [])].jobs.append(job)
                } else {
                    result = .failed
                    dead.append((job, "gave up after \(retryPolicy.maximumAttempts) retries: \(attempt.reason ?? "")"))
                }
            }
            outcomes.append(PushOutcome(
                pushId: job.pushId, appId: job.appId, subscriptionId: job.subscriptionId, notificationId: job.notificationId,
                sequence: job.sequence, platform: job.platform, result: result, status: attempt.status, reason: attempt.reason,
                attempt: attempt.job.attempt, invalidSince: invalidSince, at: now))
            if result != .accepted {
                logger.info("push not accepted", metadata: [
                    "pushId": "\(job.pushId)", "appId": "\(job.appId)", "result": "\(result.rawValue)",
                    "status": "\(attempt.status.map(String.init) ?? "-")", "reason": "\(attempt.reason ?? "-")",
                ])
            }
        }
        let encoder = WireCoding.makeEncoder()
        var messages: [AMQPOutboundMessage] = []
        for (queue, retry) in retries {
            messages.append(AMQPOutboundMessage(
                routingKey: queue, body: try encoder.encode(PushJobBatch(jobs: retry.jobs)),
                properties: AMQPProperties(expirationMilliseconds: retry.wait)))
        }
        for (job, reason) in dead {
            messages.append(AMQPOutboundMessage(
                routingKey: "\(QueueNames.pushQueue(job.platform)).dead", body: try encoder.encode(PushJobBatch(jobs: [job])),
                properties: AMQPProperties(headers: ["x-notify-reason": reason, "x-notify-queue": QueueNames.pushQueue(job.platform)])))
        }
        if !outcomes.isEmpty {
            messages.append(AMQPOutboundMessage(routingKey: QueueNames.pushFeedback, body: try encoder.encode(PushOutcomeBatch(outcomes: outcomes))))
        }
        return messages
    }
}
