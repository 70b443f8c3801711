import Foundation
import NotifyAMQP
import NotifyModels

/// Retries through the broker: attempt n waits in a delay queue (TTL, then dead-lettered back to the
/// provider's work queue), with exponential delays and jitter, for a bounded number of attempts.
struct RetryPolicy: Sendable {
    /// Delay before attempt 1, 2, ...; the count is the number of retries.
    let delaysMilliseconds: [Int]

    init(delaysMilliseconds: [Int] = [1_000, 5_000, 25_000, 125_000, 600_000]) {
        self.delaysMilliseconds = delaysMilliseconds
    }

    var maximumAttempts: Int { delaysMilliseconds.count }

    /// The delay queue for a delay (named after it, so changing the delays never clashes with a declared queue).
    func queueName(_ platform: Platform, delay: Int) -> String {
        "push.\(platform.rawValue).delay.\(delay)ms"
    }

    func topology(_ platform: Platform) -> AMQPTopology {
        delaysMilliseconds.reduce(AMQPTopology()) { topology, delay in
            topology.merging(.delayQueue(queueName(platform, delay: delay), milliseconds: delay, thenTo: QueueNames.pushQueue(platform)))
        }
    }

    /// Where job's next attempt waits and for how long, or nil when it is out of attempts.
    /// A Retry-After longer than the next delay moves the job to the first delay that covers it.
    func nextAttempt(after attempt: Int, retryAfterSeconds: Int?) -> (attempt: Int, delay: Int, wait: Int)? {
        var next = attempt + 1
        while next <= delaysMilliseconds.count {
            let delay = delaysMilliseconds[next - 1]
            if let retryAfterSeconds, retryAfterSeconds * 1000 > delay, next < delaysMilliseconds.count {
                next += 1
                continue
            }
            let jittered = Int(Double(delay) * Double.random(in: 0.8...1.0))
            let wait = max(jittered, min((retryAfterSeconds ?? 0) * 1000, delay))
            return (next, delay, wait)
        }
        return nil
    }
}
