import Foundation

/// Message properties this project uses.
public struct AMQPProperties: Sendable, Equatable {
    public var contentType: String?
    public var messageId: String?
    public var correlationId: String?
    public var replyTo: String?
    /// The publishing user; RabbitMQ rejects a message whose user_id is not the connection's user.
    public var userId: String?
    /// String-valued headers.
    public var headers: [String: String]
    /// Persistent (delivery mode 2) unless told otherwise.
    public var persistent: Bool
    /// Per-message TTL (in a delay queue: how long this message waits, at most the queue's delay).
    public var expirationMilliseconds: Int?

    public init(
        contentType: String? = "application/json", messageId: String? = nil, correlationId: String? = nil,
        replyTo: String? = nil, userId: String? = nil, headers: [String: String] = [:], persistent: Bool = true,
        expirationMilliseconds: Int? = nil
    ) {
        self.contentType = contentType
        self.messageId = messageId
        self.correlationId = correlationId
        self.replyTo = replyTo
        self.userId = userId
        self.headers = headers
        self.persistent = persistent
        self.expirationMilliseconds = expirationMilliseconds
    }
}

/// A message to publish.
public struct AMQPOutboundMessage: Sendable {
    public var exchange: String
    public var routingKey: String
    public var body: Data
    public var properties: AMQPProperties
    /// A mandatory message that reaches no queue is an error (the default); a non-mandatory one
    /// (e.g. a live-update broadcast nobody listens to) is dropped by the broker.
    public var mandatory: Bool

    public init(exchange: String = "", routingKey: String, body: Data, properties: AMQPProperties = AMQPProperties(), mandatory: Bool = true) {
        self.exchange = exchange
        self.routingKey = routingKey
        self.body = body
        self.properties = properties
        self.mandatory = mandatory
    }
}

/// Identifies a delivery on the connection that received it; a tag from an earlier
/// connection is ignored (the broker redelivers that message).
public struct AMQPDeliveryTag: Sendable, Hashable, Comparable {
    let connectionGeneration: UInt64
    let value: UInt64

    public static func < (lhs: AMQPDeliveryTag, rhs: AMQPDeliveryTag) -> Bool {
        (lhs.connectionGeneration, lhs.value) < (rhs.connectionGeneration, rhs.value)
    }
}

/// A message received from a queue.
public struct AMQPDelivery: Sendable {
    public var tag: AMQPDeliveryTag
    public var exchange: String
    public var routingKey: String
    public var redelivered: Bool
    public var body: Data
    public var properties: AMQPProperties
}

/// What the consumer does with a delivery once its handler is done.
public enum AMQPDisposition: Sendable, Equatable {
    /// The effect is durable: remove the message.
    case ack
    /// The message can never succeed: move it to the queue's dead-letter queue with the reason.
    case deadLetter(reason: String)
    /// Put it back for another try (e.g. the database is down).
    case requeue
}
