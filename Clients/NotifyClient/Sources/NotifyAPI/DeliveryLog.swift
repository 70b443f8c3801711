import Foundation

/// One outcome of one push attempt, as the delivery log lists it (`GET /v1/apps/{appId}/notifications/{id}/deliveries`,
/// `GET /v1/apps/{appId}/deliveries`).
public struct DeliveryRecord: Codable, Sendable, Equatable {
    @LowercasedUUID public var notificationId: UUID
    /// The push: the same on each attempt, so its retries and outcome are told apart from other pushes'.
    @LowercasedUUID public var pushId: UUID
    @LowercasedUUID public var subscriptionId: UUID
    public var platform: String
    public var sequence: Int64
    public var attempt: Int
    /// `accepted`, `retrying`, `tokenInvalid`, `credentialsRejected` or `failed`.
    public var result: String
    /// The provider's HTTP status, when it answered one.
    public var status: Int?
    /// The provider's reason, e.g. `Unregistered`.
    public var reason: String?
    public var at: Date

    public init(
        notificationId: UUID, pushId: UUID, subscriptionId: UUID, platform: String, sequence: Int64, attempt: Int, result: String,
        status: Int?, reason: String?, at: Date
    ) {
        self.notificationId = notificationId
        self.pushId = pushId
        self.subscriptionId = subscriptionId
        self.platform = platform
        self.sequence = sequence
        self.attempt = attempt
        self.result = result
        self.status = status
        self.reason = reason
        self.at = at
    }
}

/// A page of a delivery log, oldest first, and the token of the next page (nil: this page ends the log).
public struct DeliveryPage: Codable, Sendable, Equatable {
    public var deliveries: [DeliveryRecord]
    public var nextPageToken: String?

    public init(deliveries: [DeliveryRecord], nextPageToken: String?) {
        self.deliveries = deliveries
        self.nextPageToken = nextPageToken
    }
}

/// What became of a notification's pushes (`…/deliveries/summary`): each push once, by its latest outcome.
public struct DeliverySummary: Codable, Sendable, Equatable {
    @LowercasedUUID public var notificationId: UUID
    /// Pushes with an outcome logged.
    public var pushes: Int
    /// Per provider (`apns`, `fcm`, ...), pushes by their latest result.
    public var byProvider: [String: [String: Int]]
    /// Pushes by their latest result, all providers together.
    public var byResult: [String: Int]

    public init(notificationId: UUID, pushes: Int, byProvider: [String: [String: Int]], byResult: [String: Int]) {
        self.notificationId = notificationId
        self.pushes = pushes
        self.byProvider = byProvider
        self.byResult = byResult
    }
}
