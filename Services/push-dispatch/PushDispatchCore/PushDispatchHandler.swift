import Foundation
import Logging
import NotifyAMQP
import NotifyModels
import NotifyWire
import NotifyRuntime
import ServiceLifecycle

/// Takes batches of push-job messages from a provider's queue in one lane and hands their jobs to the provider, each
/// app's jobs as the provider's in-flight budget allows (`InFlightBudget`: an app whose provider answers slowly holds
/// only its own share, and its further jobs are parked in `push.parked` until they are tried again). Before the
/// consumer acks, it publishes (with confirms) what follows from each answer: transient failures to a delay queue for
/// another attempt, hopeless ones to the lane queue's dead-letter queue with the reason, and every outcome to
/// `push.feedback` (storage removes invalid tokens, flags refused credentials, keeps the delivery log) through the
/// reporter, which groups the outcomes of many batches. The consumer takes further batches meanwhile, up to its
/// prefetch: a batch waiting for a slow app's answers does not hold up the next ones.
struct PushDispatchHandler: Sendable {
    let provider: any PushProvider
    let lane: PushLane
    let budget: InFlightBudget
    let publisher: any MessagePublisher
    let reporter: OutcomeReporter
    let retryPolicy: RetryPolicy
    let metrics: DispatchMetrics
    let logger: Logger
    /// Drops visual fallbacks whose device synced in time, or whose subscription is gone.
    let syncCheck: any VisualFallbackCheck

    /// The queue this handler's jobs come from: retries and parked jobs go back to it.
    private var queue: String { QueueNames.pushQueue(provider.platform, lane: lane) }

    func handle(_ deliveries: [AMQPDelivery]) async -> AMQPHandling {
        var dispositions = [AMQPDisposition](repeating: .ack, count: deliveries.count)
        var jobs: [PushJob] = []
        for (index, delivery) in deliveries.enumerated() {
            do {
                jobs.append(contentsOf: try PushJobBatch(delivery).jobs)
            } catch {
                dispositions[index] = .deadLetter(reason: "not a push-job batch: \(error)")
            }
        }
        if logger.logLevel <= .debug {
            for job in jobs { logger.debug("push received", metadata: ["notificationId": .id(job.notificationId), "pushId": .id(job.pushId)]) }
        }
        // Taken on only while few enough jobs wait for the provider: otherwise the consumer stops taking messages.
        await budget.roomToWait()
        return .settleAfter { [self, jobs, dispositions] in
            await dispatch(jobs, dispositions: dispositions, deliveries: deliveries.count)
        }
    }

    /// Sends the jobs, publishes their consequences and reports their outcomes; the batch's dispositions once done.
    private func dispatch(_ received: [PushJob], dispositions: [AMQPDisposition], deliveries: Int) async -> [AMQPDisposition] {
        var jobs = received
        // A visual fallback is not needed once its device synced the notification (after the shoulder tap), nor sent
        // once its subscription is gone (the device unregistered, or changed hands).
        if jobs.contains(where: \.isVisualFallback) {
            let fallbacks = jobs.filter(\.isVisualFallback)
            guard let unneeded = try? await RetryUntilShutdown.run("check whether devices synced", logger: logger, { try await syncCheck.unneeded(fallbacks) })
            else { return RetryUntilShutdown.requeueing(dispositions) }
            if logger.logLevel <= .debug {
                for job in fallbacks where unneeded.contains(job.pushId) {
                    logger.debug("visual fallback not sent: the device synced, or its subscription is gone", metadata: [
                        "notificationId": .id(job.notificationId), "pushId": .id(job.pushId),
                    ])
                }
            }
            jobs.removeAll { $0.isVisualFallback && unneeded.contains($0.pushId) }
        }
        let sent = await send(jobs)
        for attempt in sent.attempts {
            metrics.recordAnswerTime(attempt.answerTime)
        }
        var consequences = self.consequences(of: sent.attempts, for: sent.jobs)
        for (parked, wait) in sent.parked {
            metrics.countParked(parked.count)
            logger.debug("an app's pushes are parked: its provider answers slowly", metadata: [
                "appId": "\(parked[0].appId)", "provider": "\(provider.platform.rawValue)", "pushes": "\(parked.count)", "wait": "\(wait)",
            ])
            consequences.messages.append(AMQPOutboundMessage(
                routingKey: QueueNames.pushParked, wire: PushJobBatch(jobs: parked),
                properties: DelayedForward.properties(due: Date().addingTimeInterval(wait.inSeconds), to: queue)))
        }
        // Unacked, the jobs come back and are sent again: repeats carry the same push id and collapse id.
        if !consequences.messages.isEmpty {
            let published = await RetryUntilShutdown.succeeded("publish retries, parked jobs and dead letters", logger: logger) {
                try await publisher.publish(consequences.messages)
            }
            if !published { return RetryUntilShutdown.requeueing(dispositions) }
        }
        if consequences.outcomes.isEmpty { return dispositions }
        let reported = await reporter.report(consequences.outcomes, deliveries: deliveries)
        if reported { metrics.count(consequences.tally) }
        return reported ? dispositions : RetryUntilShutdown.requeueing(dispositions)
    }

    /// What came of a batch's jobs: those sent with their attempts (in the same order), and runs of an app's jobs
    /// parked with how long they wait.
    private struct Sent {
        var jobs: [PushJob] = []
        var attempts: [PushAttempt] = []
        var parked: [(jobs: [PushJob], wait: Duration)] = []
    }

    /// Sends each app's jobs as the budget grants slots, the apps at once.
    private func send(_ jobs: [PushJob]) async -> Sent {
        // Most messages hold one app's jobs: those go as they are, not regrouped (copied) and sent from a child task.
        if let appId = jobs.first?.appId, jobs.allSatisfy({ $0.appId == appId }) { return await send(jobs, of: appId) }
        var byApp: [String: [PushJob]] = [:]
        for job in jobs { byApp[job.appId, default: []].append(job) }
        return await withTaskGroup(of: Sent.self, returning: Sent.self) { group in
            for (appId, appJobs) in byApp {
                group.addTask { await send(appJobs, of: appId) }
            }
            var all = Sent()
            for await sent in group {
                all.jobs += sent.jobs
                all.attempts += sent.attempts
                all.parked += sent.parked
            }
            return all
        }
    }

    /// Sends one app's jobs run by run, each run as many as the budget grants at once.
    private func send(_ jobs: [PushJob], of appId: String) async -> Sent {
        await withTaskGroup(of: Sent.self, returning: Sent.self) { group in
            var all = Sent()
            var next = 0
            while next < jobs.count {
                switch await budget.acquire(appId: appId, lane: lane, wanted: jobs.count - next) {
                case .slots(let lease) where next == 0 && lease.count == jobs.count:
                    // All of them at once (the usual case): sent from this task, the jobs not copied into a run.
                    next = jobs.count
                    let attempts = await provider.deliver(jobs, concurrency: jobs.count)
                    budget.release(lease)
                    all.jobs = jobs
                    all.attempts = attempts
                case .slots(let lease):
                    let run = Array(jobs[next..<next + lease.count])
                    next += lease.count
                    group.addTask { [provider, budget] in
                        let attempts = await provider.deliver(run, concurrency: run.count)
                        budget.release(lease)
                        return Sent(jobs: run, attempts: attempts)
                    }
                case .park(let wait):
                    all.parked.append((Array(jobs[next...]), wait))
                    next = jobs.count
                }
            }
            for await sent in group {
                all.jobs += sent.jobs
                all.attempts += sent.attempts
            }
            return all
        }
    }

    /// The jobs that wait in one retry queue for one provider travel together.
    private struct RetryKey: Hashable {
        let queue: String
        let provider: Platform
    }

    /// The retry and dead-letter messages, and the outcomes, that follow from the attempts.
    private func consequences(of attempts: [PushAttempt], for jobs: [PushJob]) -> (
        messages: [AMQPOutboundMessage], outcomes: [PushOutcome], tally: [PushOutcome.Result: Int]
    ) {
        let now = Date()
        var outcomes: [PushOutcome] = []
        var retries: [RetryKey: (wait: Int, jobs: [PushJob])] = [:]
        var dead: [(job: PushJob, reason: String)] = []
        var tally: [PushOutcome.Result: Int] = [:]
        for (sentJob, attempt) in zip(jobs, attempts) {
            var job = sentJob
            let result: PushOutcome.Result
            var invalidSince: Date?
            let verdict = attempt.verdict
            switch verdict.action {
            case .accepted:
                result = .accepted
                if let changedAt = job.changedAt { metrics.recordDeliveryLatency(seconds: now.timeIntervalSince(changedAt)) }
            case .tokenInvalid(let since):
                result = .tokenInvalid
                invalidSince = since ?? now
            case .credentials:
                result = .credentialsRejected
                dead.append((job, "the provider refused the app's credentials: \(verdict.reason ?? "")"))
                logger.error("the provider refused the app's credentials; they are flagged", metadata: [
                    "appId": "\(job.appId)", "provider": "\(job.platform.rawValue)", "notificationId": .id(job.notificationId),
                    "pushId": .id(job.pushId),
                ])
            case .fail:
                result = .failed
                dead.append((job, verdict.reason ?? "failed"))
            case .retry(let after):
                if let next = retryPolicy.nextAttempt(after: job.attempt, retryAfterSeconds: after) {
                    result = .retrying
                    job.attempt = next.attempt
                    let key = RetryKey(queue: retryPolicy.queueName(delay: next.delay), provider: job.platform.provider)
                    retries[key, default: (next.wait, [])].jobs.append(job)
                } else {
                    result = .failed
                    dead.append((job, "gave up after \(retryPolicy.maximumAttempts) retries: \(verdict.reason ?? "")"))
                }
            }
            tally[result, default: 0] += 1
            outcomes.append(PushOutcome(
                pushId: job.pushId, appId: job.appId, subscriptionId: job.subscriptionId, notificationId: job.notificationId,
                sequence: job.sequence, platform: job.platform, result: result, status: verdict.status, reason: verdict.reason,
                attempt: sentJob.attempt, invalidSince: invalidSince, at: now))
            logger.debug("push answered", metadata: [
                "notificationId": .id(job.notificationId), "pushId": .id(job.pushId), "appId": "\(job.appId)",
                "subscriptionId": .id(job.subscriptionId), "provider": "\(job.platform.rawValue)", "attempt": "\(sentJob.attempt)",
                "result": "\(result.rawValue)", "status": "\(verdict.status.map(String.init) ?? "-")", "reason": "\(verdict.reason ?? "-")",
            ])
        }
        var messages: [AMQPOutboundMessage] = []
        for (key, retry) in retries {
            messages.append(AMQPOutboundMessage(
                routingKey: key.queue, wire: PushJobBatch(jobs: retry.jobs),
                properties: DelayedForward.properties(due: now.addingTimeInterval(Double(retry.wait) / 1000), to: QueueNames.pushQueue(key.provider, lane: lane))))
        }
        for (job, reason) in dead {
            logger.warning("push dead-lettered", metadata: [
                "notificationId": .id(job.notificationId), "pushId": .id(job.pushId), "appId": "\(job.appId)",
                "subscriptionId": .id(job.subscriptionId), "provider": "\(job.platform.rawValue)", "reason": "\(reason)",
            ])
            messages.append(AMQPOutboundMessage(
                routingKey: AMQPTopology.deadLetterQueue(of: QueueNames.pushQueue(job.platform.provider, lane: lane)), wire: PushJobBatch(jobs: [job]),
                properties: AMQPProperties(headers: [
                    "x-notify-reason": .string(reason), "x-notify-queue": .string(QueueNames.pushQueue(job.platform.provider, lane: lane)),
                ])))
        }
        return (messages, outcomes, tally)
    }
}
