/// How fast an app may publish, per ingest instance: requests and notifications per second. nil (or absent in JSON)
/// leaves the service's default (`NOTIFY_APP_REQUESTS_PER_SECOND`, `NOTIFY_APP_NOTIFICATIONS_PER_SECOND`).
public struct RateLimit: Codable, Sendable, Hashable {
    public var requestsPerSecond: Int?
    public var notificationsPerSecond: Int?

    public init(requestsPerSecond: Int? = nil, notificationsPerSecond: Int? = nil) {
        self.requestsPerSecond = requestsPerSecond
        self.notificationsPerSecond = notificationsPerSecond
    }
}
