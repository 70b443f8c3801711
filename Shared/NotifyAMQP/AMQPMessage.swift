import Foundation

/// Message properties this project uses.
public struct AMQPProperties: Sendable, Equatable {
    public var contentType: String?
    public var messageId: String?
    public var correlationId: String?
    public var replyTo: String?
    /// The publishing user; RabbitMQ rejects a message whose user_id is not the connection's user.
    public var userId: String?
    /// Application headers (strings and integers; other kinds a message arrives with are left out).
    public var headers: [String: AMQPHeaderValue]
    /// Persistent (delivery mode 2) unless told otherwise.
    public var persistent: Bool

    public init(
        contentType: String? = "application/json", messageId: String? = nil, correlationId: String? = nil,
        replyTo: String? = nil, userId: String? = nil, headers: [String: AMQPHeaderValue] = [:], persistent: Bool = true
    ) {
        self.contentType = contentType
        self.messageId = messageId
        self.correlationId = correlationId
        self.replyTo = replyTo
        self.userId = userId
        self.headers = headers
        self.persistent = persistent
    }
}

/// The value of an application header: text (AMQP long string) or a signed 64-bit integer.
public enum AMQPHeaderValue: Sendable, Equatable, Hashable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    CustomStringConvertible
{
    case string(String)
    case integer(Int64)

    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }

    /// The text, or nil for an integer.
    public var stringValue: String? {
        if case .string(let text) = self { text } else { nil }
    }

    /// The integer, or nil for text.
    public var integerValue: Int64? {
        if case .integer(let number) = self { number } else { nil }
    }

    public var description: String {
        switch self {
        case .string(let text): text
        case .integer(let number): String(number)
        }
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

extension AMQPDelivery {
    /// `message` as a consumer of its queue receives it, `tag` on the first connection: for handlers driven without a
    /// broker (as tests drive them).
    public init(received message: AMQPOutboundMessage, tag: UInt64) {
        self.init(
            tag: AMQPDeliveryTag(connectionGeneration: 1, value: tag), exchange: message.exchange, routingKey: message.routingKey,
            redelivered: false, body: message.body, properties: message.properties)
    }
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
