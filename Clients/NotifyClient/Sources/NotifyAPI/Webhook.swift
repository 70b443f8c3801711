import Foundation

/// The events an app's webhook may receive.
public enum WebhookEventType: String, Codable, Sendable, CaseIterable {
    /// A device registered (a new subscription).
    case subscriptionCreated = "subscription.created"
    /// A subscription was removed: unregistered, replaced by a new token, dropped after the provider declared its
    /// token invalid, or reassigned when another user registered its token (`reason`).
    case subscriptionDeleted = "subscription.deleted"
    /// A device joined an event source.
    case eventSourceJoined = "eventSource.joined"
    /// A device left an event source (or was taken out, the source was deleted, or its token was registered by another
    /// user).
    case eventSourceLeft = "eventSource.left"
}

/// An app's webhook (`PUT /v1/apps/{appId}/webhook`): where the service POSTs events, signed.
public struct WebhookRequest: Codable, Sendable, Equatable {
    /// An http or https URL.
    public var url: String?
    /// The events to send; default all.
    public var events: [WebhookEventType]?
    /// A new signing secret (answered once); the first PUT always makes one.
    public var rotateSecret: Bool?

    public init(url: String? = nil, events: [WebhookEventType]? = nil, rotateSecret: Bool? = nil) {
        self.url = url
        self.events = events
        self.rotateSecret = rotateSecret
    }

    /// The URL and events, checked; the field named when one is wrong.
    public func validated() throws(ValidationError) -> (url: String, events: [WebhookEventType]) {
        guard let url else { throw .missing("url") }
        guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme ?? ""), parsed.host != nil, url.utf8.count <= 2048 else {
            throw .invalid("url", "url must be an http or https URL of at most 2048 bytes")
        }
        let events = events ?? WebhookEventType.allCases
        if events.isEmpty { throw .invalid("events", "events must name at least one event") }
        return (url, events)
    }
}

/// An app's webhook as answered: the secret only when it was just made.
public struct WebhookView: Codable, Sendable, Equatable {
    public var url: String
    public var events: [WebhookEventType]
    /// The HMAC-SHA256 key of `X-Notify-Webhook-Signature` (`v1=` hex of HMAC(secret, "<timestamp>.<body>")).
    public var secret: String?

    public init(url: String, events: [WebhookEventType], secret: String?) {
        self.url = url
        self.events = events
        self.secret = secret
    }
}

/// One attempt to POST an event, in the webhook's delivery log (`GET /v1/apps/{appId}/webhook/deliveries`).
public struct WebhookAttempt: Codable, Sendable, Equatable {
    @LowercasedUUID public var eventId: UUID
    public var appId: String
    public var type: String
    public var attempt: Int
    /// The receiver's HTTP status; nil when it did not answer.
    public var status: Int?
    /// delivered, retrying or failed
    public var result: String
    public var reason: String?
    public var at: Date

    public init(eventId: UUID, appId: String, type: String, attempt: Int, status: Int?, result: String, reason: String?, at: Date) {
        self.eventId = eventId
        self.appId = appId
        self.type = type
        self.attempt = attempt
        self.status = status
        self.result = result
        self.reason = reason
        self.at = at
    }
}
