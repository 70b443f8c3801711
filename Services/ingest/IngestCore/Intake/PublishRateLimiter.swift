import NotifyModels
import Synchronization

/// Per-app publish limits, for the whole deployment: each ingest instance keeps a token bucket for requests and one for
/// notifications, each refilled at its share of the app's rate (the operator's `rateLimit`, else the service's
/// default; none: unlimited), the rate divided by the ingest instances alive (`instances`, counted as the consumers of
/// `notify.ingest` by `IngestInstanceCount`), and holding at most a second's worth. So an app is held to its limit
/// whatever the number of instances, with no lookup per request, as long as its requests are spread over them (a
/// load balancer's round robin). A request needing more than a second's worth (a large batch) passes once the bucket
/// is full and leaves it in debt, so no request is refused for good.
final class PublishRateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    private struct AppBuckets {
        var requests: Bucket?
        var notifications: Bucket?
    }

    private let defaults: RateLimit
    private let buckets = Mutex<[String: AppBuckets]>([:])
    private let instanceCount = Mutex(1)

    /// The ingest instances alive, this one included, whose count divides every limit (at least 1).
    var instances: Int {
        get { instanceCount.withLock { $0 } }
        set { instanceCount.withLock { $0 = max(newValue, 1) } }
    }

    init(defaults: RateLimit) {
        self.defaults = defaults
    }

    /// The limits that apply to `app`: its own where set, the defaults elsewhere.
    func limit(for app: RateLimit) -> RateLimit {
        RateLimit(
            requestsPerSecond: app.requestsPerSecond ?? defaults.requestsPerSecond,
            notificationsPerSecond: app.notificationsPerSecond ?? defaults.notificationsPerSecond)
    }

    /// Takes `requests` requests and `notifications` notifications from the app's buckets and answers nil, or takes
    /// nothing and answers how many seconds (at least 1) to wait before both would pass.
    func admit(appId: String, limit app: RateLimit, requests: Int, notifications: Int, now: ContinuousClock.Instant = .now) -> Int? {
        let limit = limit(for: app)
        guard limit.requestsPerSecond != nil || limit.notificationsPerSecond != nil else { return nil }
        let share = 1 / Double(instances)
        return buckets.withLock { all in
            var entry = all[appId] ?? AppBuckets()
            let requestWait = Self.refill(&entry.requests, rate: limit.requestsPerSecond.map { Double($0) * share }, need: requests, now: now)
            let notificationWait = Self.refill(
                &entry.notifications, rate: limit.notificationsPerSecond.map { Double($0) * share }, need: notifications, now: now)
            let wait = max(requestWait, notificationWait)
            if wait == 0 {
                entry.requests?.tokens -= Double(requests)
                entry.notifications?.tokens -= Double(notifications)
            }
            all[appId] = entry
            return wait == 0 ? nil : max(Int(wait.rounded(.up)), 1)
        }
    }

    /// Refills `bucket` up to now and answers the seconds until it holds what `need` requires (0: it does).
    private static func refill(_ bucket: inout Bucket?, rate: Double?, need: Int, now: ContinuousClock.Instant) -> Double {
        guard let rate, rate > 0 else {
            bucket = nil
            return 0
        }
        let capacity = rate
        var current = bucket ?? Bucket(tokens: capacity, updated: now)
        let elapsed = now - current.updated
        let seconds = elapsed.inSeconds
        current.tokens = min(capacity, current.tokens + seconds * rate)
        current.updated = now
        bucket = current
        let required = min(Double(need), capacity)
        return current.tokens >= required ? 0 : (required - current.tokens) / rate
    }
}
