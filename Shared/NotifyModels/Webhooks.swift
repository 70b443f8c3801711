import Foundation

/// An app's webhook as stored.
public struct WebhookRecord: Codable, Sendable, Equatable {
    public var appId: String
    public var url: String
    public var events: [String]
    /// The HMAC-SHA256 key the POSTs are signed with, sealed (`SecretKeyring`, purpose `.webhookSecret`).
    public var secret: String
    public var createdAt: Date

    public init(appId: String, url: String, events: [String], secret: String, createdAt: Date) {
        self.appId = appId
        self.url = url
        self.events = events
        self.secret = secret
        self.createdAt = createdAt
    }
}

/// One event for an app's webhook, on `webhooks.deliveries` (relayed by storage from its outbox).
public struct WebhookDelivery: Codable, Sendable, Equatable {
    public var eventId: UUID
    public var appId: String
    public var type: String
    /// The event's data object, JSON.
    public var data: Data
    public var createdAt: Date

    public init(eventId: UUID, appId: String, type: String, data: Data, createdAt: Date) {
        self.eventId = eventId
        self.appId = appId
        self.type = type
        self.data = data
        self.createdAt = createdAt
    }

    /// The queue, and its dead-letter queue `webhooks.deliveries.dead`.
    public static let queue = "webhooks.deliveries"
}

/// One message on `webhooks.outcomes`: attempts push-dispatch made, for storage to write to the delivery log.
public struct WebhookOutcomeBatch: Codable, Sendable, Equatable {
    public var outcomes: [WebhookAttempt]
    public init(outcomes: [WebhookAttempt]) { self.outcomes = outcomes }

    public static let queue = "webhooks.outcomes"
}
