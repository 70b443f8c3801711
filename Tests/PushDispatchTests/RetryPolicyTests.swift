import Testing

@testable import PushDispatchCore

/// Retries through the retry queues: exponential delays with jitter, Retry-After honoured, a bounded number of attempts.
@Suite("Retry schedule")
struct RetryPolicyTests {
    let policy = RetryPolicy(delaysMilliseconds: [1_000, 5_000, 25_000, 125_000, 600_000])

    @Test("each attempt waits its delay less up to 20 % jitter, in the retry queue named after it; after the last, none")
    func schedule() throws {
        for attempt in 0..<5 {
            let next = try #require(policy.nextAttempt(after: attempt, retryAfterSeconds: nil))
            #expect(next.attempt == attempt + 1)
            #expect(next.delay == policy.delaysMilliseconds[attempt])
            #expect((next.delay * 8 / 10...next.delay).contains(next.wait))
        }
        #expect(policy.nextAttempt(after: 5, retryAfterSeconds: nil) == nil, "a sixth retry: the job goes to the dead-letter queue")
        #expect(policy.queueName(delay: 5_000) == "push.retry.5000ms")
    }

    @Test("a Retry-After longer than the next delay moves the job to the first delay that covers it, and is waited in full")
    func retryAfter() throws {
        let next = try #require(policy.nextAttempt(after: 0, retryAfterSeconds: 20))
        #expect(next.delay == 25_000)
        #expect(next.wait >= 20_000)
        let short = try #require(policy.nextAttempt(after: 0, retryAfterSeconds: 1))
        #expect(short.delay == 1_000 && short.wait == 1_000)
    }
}
