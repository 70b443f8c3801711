import NotifyModels
import Testing

@testable import IngestCore

/// Token buckets per app: a second's worth at most, refilled at the rate, the app's own limit over the default.
@Suite("PublishRateLimiter")
struct PublishRateLimiterTests {
    private let start = ContinuousClock.now

    @Test("a second's worth of requests passes at once; the next waits, and passes once the bucket refilled")
    func requests() {
        let limiter = PublishRateLimiter(defaults: RateLimit(requestsPerSecond: 5))
        for _ in 0..<5 { #expect(limiter.admit(appId: "a", limit: RateLimit(), requests: 1, notifications: 0, now: start) == nil) }
        #expect(limiter.admit(appId: "a", limit: RateLimit(), requests: 1, notifications: 0, now: start) == 1, "1 s to wait, rounded up")
        #expect(limiter.admit(appId: "b", limit: RateLimit(), requests: 1, notifications: 0, now: start) == nil, "each app has its own bucket")
        #expect(limiter.admit(appId: "a", limit: RateLimit(), requests: 1, notifications: 0, now: start + .milliseconds(200)) == nil)
    }

    @Test("the app's own limit wins over the default; no limit at all is unlimited")
    func ownLimit() {
        let limiter = PublishRateLimiter(defaults: RateLimit(requestsPerSecond: 1))
        let own = RateLimit(requestsPerSecond: 3)
        for _ in 0..<3 { #expect(limiter.admit(appId: "a", limit: own, requests: 1, notifications: 0, now: start) == nil) }
        #expect(limiter.admit(appId: "a", limit: own, requests: 1, notifications: 0, now: start) != nil)
        let unlimited = PublishRateLimiter(defaults: RateLimit())
        for _ in 0..<10_000 { #expect(unlimited.admit(appId: "a", limit: RateLimit(), requests: 1, notifications: 500, now: start) == nil) }
    }

    @Test("a batch larger than a second's worth passes on a full bucket and leaves it in debt; a refused one takes nothing")
    func largeBatch() {
        let limiter = PublishRateLimiter(defaults: RateLimit(notificationsPerSecond: 100))
        #expect(limiter.admit(appId: "a", limit: RateLimit(), requests: 0, notifications: 500, now: start) == nil)
        // 400 in debt: 100 more need 5 s of refill.
        #expect(limiter.admit(appId: "a", limit: RateLimit(), requests: 0, notifications: 100, now: start) == 5)
        #expect(limiter.admit(appId: "a", limit: RateLimit(), requests: 0, notifications: 100, now: start + .seconds(5)) == nil)
    }
}
