import Foundation
import Metrics
import NotifyAMQP
import NotifyModels
import NotifyWire

/// Push jobs gathered into messages per provider, `jobsPerMessage` to a message, each message written as soon
/// as it is full and routed to its provider's queue in `lane`; the jobs are counted in `notify_push_jobs_total{provider}` once the messages are published.
/// Visual fallbacks go to `push.fallback`, due `visualFallbackDelay` after their change, a message per change.
struct PushJobMessages {
    private let jobsPerMessage: Int
    private let visualFallbackDelay: TimeInterval
    private let lane: PushLane
    private var messages: [AMQPOutboundMessage] = []
    private var pending: [Platform: [PushJob]] = [:]
    private var jobsPerProvider: [Platform: Int] = [:]

    init(jobsPerMessage: Int, visualFallbackDelay: TimeInterval = 0, lane: PushLane = .interactive) {
        self.jobsPerMessage = jobsPerMessage
        self.visualFallbackDelay = visualFallbackDelay
        self.lane = lane
    }

    mutating func add(_ jobs: [PushJob]) {
        var fallbacks: [PushJob] = []
        for job in jobs {
            if job.isVisualFallback {
                fallbacks.append(job)
                continue
            }
            let provider = job.platform.provider
            pending[provider, default: []].append(job)
            if pending[provider]?.count == jobsPerMessage { write(provider) }
        }
        if let first = fallbacks.first {
            let due = (first.changedAt ?? Date()).addingTimeInterval(visualFallbackDelay)
            messages.append(AMQPOutboundMessage(
                routingKey: QueueNames.pushVisualFallback, wire: PushJobBatch(jobs: fallbacks),
                properties: DelayedForward.properties(due: due, to: QueueNames.pushQueue(first.platform.provider))))
        }
    }

    /// Every message, the last partly filled one of each provider included.
    mutating func finish() -> [AMQPOutboundMessage] {
        for provider in Platform.providers where pending[provider]?.isEmpty == false { write(provider) }
        return messages
    }

    /// Adds the jobs to `notify_push_jobs_total{provider}`.
    func count() {
        for (provider, jobs) in jobsPerProvider {
            Counter(label: "notify_push_jobs_total", dimensions: [("provider", provider.rawValue)]).increment(by: jobs)
        }
    }

    private mutating func write(_ provider: Platform) {
        guard let jobs = pending.removeValue(forKey: provider) else { return }
        messages.append(AMQPOutboundMessage(
            exchange: QueueNames.pushExchange, routingKey: QueueNames.pushRoutingKey(provider, lane: lane), wire: PushJobBatch(jobs: jobs)))
        jobsPerProvider[provider, default: 0] += jobs.count
    }
}
