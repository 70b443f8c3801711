import Foundation
import NotifyAMQP
import NotifyModels

/// Retries through the broker: attempt n waits in the retry queue of its delay (`push.retry.<ms>ms`, shared by the
/// providers) until `RetryForwarder` puts it back on its provider's work queue, with exponential delays and jitter,
/// for a bounded number of attempts.
struct RetryPolicy: Sendable {
    /// Delay before attempt 1, 2, ...; the count is the number of retries.
    let delaysMilliseconds: [Int]

    init(delaysMilliseconds: [Int] = [1_000, 5_000, 25_000, 125_000, 600_000]) {
        self.delaysMilliseconds = delaysMilliseconds
    }

    var maximumAttempts: Int { delaysMilliseconds.count }

    /// The retry queue of a delay (named after it, so changing the delays never clashes with a declared queue).
    func queueName(delay: Int) -> String {
        "push.retry.\(delay)ms"
    }

    /// The retry queues, one per delay.
    var queueNames: [String] { delaysMilliseconds.map(queueName(delay:)) }

    var topology: AMQPTopology {
        queueNames.reduce(AMQPTopology()) { $0.merging(.workQueue($1)) }
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
