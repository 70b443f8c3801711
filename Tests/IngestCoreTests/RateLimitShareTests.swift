import NotifyModels
import Testing

@testable import IngestCore

/// An app's limit holds for the whole deployment: each ingest instance takes its share.
@Suite struct RateLimitShareTests {
    @Test("with two instances alive, each admits half of the app's limit; alone, all of it")
    func eachInstanceTakesItsShare() {
        let limiter = PublishRateLimiter(defaults: RateLimit())
        let now = ContinuousClock.now
        let limit = RateLimit(requestsPerSecond: 10)
        limiter.instances = 2
        let shared = (0..<10).filter { _ in limiter.admit(appId: "a", limit: limit, requests: 1, notifications: 1, now: now) == nil }.count
        #expect(shared == 5)
        limiter.instances = 1
        let alone = (0..<10).filter { _ in limiter.admit(appId: "b", limit: limit, requests: 1, notifications: 1, now: now) == nil }.count
        #expect(alone == 10)
        limiter.instances = 0
        #expect(limiter.instances == 1, "never fewer than this instance")
    }

    @Test("a share below one request a second lets one through, then one each time the share has refilled")
    func smallShare() {
        let limiter = PublishRateLimiter(defaults: RateLimit())
        limiter.instances = 4
        let now = ContinuousClock.now
        let limit = RateLimit(requestsPerSecond: 1)
        #expect(limiter.admit(appId: "a", limit: limit, requests: 1, notifications: 1, now: now) == nil)
        let wait = limiter.admit(appId: "a", limit: limit, requests: 1, notifications: 1, now: now)
        #expect(wait == 4, "a quarter of a request a second: the next waits 4 s")
        #expect(limiter.admit(appId: "a", limit: limit, requests: 1, notifications: 1, now: now + .seconds(2)) != nil)
        #expect(limiter.admit(appId: "a", limit: limit, requests: 1, notifications: 1, now: now + .seconds(4)) == nil)
    }
}
