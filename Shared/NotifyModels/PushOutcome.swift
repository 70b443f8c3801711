import Foundation

/// What became of one push attempt, reported by push-dispatch on `push.feedback`.
public struct PushOutcome: Codable, Sendable, Equatable {
    /// How dispatch classified the provider's answer.
    public enum Result: String, Codable, Sendable, CaseIterable {
        /// The provider accepted the push.
        case accepted
        /// A transient failure: the push waits in a retry queue for another attempt.
        case retrying
        /// The device token is no longer valid: storage removes the subscription (see `invalidSince`).
        case tokenInvalid
        /// The app's provider credentials were refused: nothing is deleted, the operator must fix them.
        case credentialsRejected
        /// Can never succeed (payload or request bug, or out of attempts): kept in the dead-letter queue.
        case failed
    }

    public var pushId: UUID
    public var appId: String
    public var subscriptionId: UUID
    public var notificationId: UUID
    public var sequence: Int64
    public var platform: Platform
    public var result: Result
    /// The provider's status and reason, e.g. 410 Unregistered.
    public var status: Int?
    public var reason: String?
    public var attempt: Int
    /// For tokens found invalid: the time the provider says the token stopped being valid (APNs 410
    /// `timestamp`); a subscription registered again after it is kept.
    public var invalidSince: Date?
    public var at: Date

    public init(
        pushId: UUID, appId: String, subscriptionId: UUID, notificationId: UUID, sequence: Int64, platform: Platform,
        result: Result, status: Int?, reason: String?, attempt: Int, invalidSince: Date?, at: Date
    ) {
        self.pushId = pushId
        self.appId = appId
        self.subscriptionId = subscriptionId
        self.notificationId = notificationId
        self.sequence = sequence
        self.platform = platform
        self.result = result
        self.status = status
        self.reason = reason
        self.attempt = attempt
        self.invalidSince = invalidSince
        self.at = at
    }
}

/// One AMQP message on `push.feedback`.
public struct PushOutcomeBatch: Codable, Sendable {
    public var outcomes: [PushOutcome]
    public init(outcomes: [PushOutcome]) { self.outcomes = outcomes }
}
