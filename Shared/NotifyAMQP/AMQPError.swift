/// An AMQP failure. The description names what failed, never credentials.
public struct AMQPError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case invalidConfiguration, connectionFailed, notConnected, connectionLost
            case nacked, unroutable, channelClosed, refused, protocolError, shutdown, confirmTimeout
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        public static let invalidConfiguration = Code(.invalidConfiguration)
        /// Could not open, log in or declare the topology.
        public static let connectionFailed = Code(.connectionFailed)
        /// The connection is down (the broker is unreachable); try again later.
        public static let notConnected = Code(.notConnected)
        /// The connection dropped before the broker confirmed; the message may or may not be stored.
        public static let connectionLost = Code(.connectionLost)
        /// The broker refused the message (basic.nack).
        public static let nacked = Code(.nacked)
        /// A mandatory message matched no queue (basic.return).
        public static let unroutable = Code(.unroutable)
        /// The broker closed the channel or connection with an error.
        public static let channelClosed = Code(.channelClosed)
        /// The broker refused an operation (a queue or exchange that does not exist, a permission the user lacks); the
        /// connection it was asked on stays usable.
        public static let refused = Code(.refused)
        public static let protocolError = Code(.protocolError)
        /// The publisher or consumer is shutting down.
        public static let shutdown = Code(.shutdown)
        /// No confirm came within the publisher's confirm timeout; the message may or may not be stored.
        public static let confirmTimeout = Code(.confirmTimeout)

        public var description: String { base.rawValue }
    }

    public var code: Code
    public var message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    /// Whether trying again later may succeed.
    public var isTransient: Bool {
        code == .notConnected || code == .connectionLost || code == .channelClosed || code == .connectionFailed || code == .confirmTimeout
    }

    public var description: String { "AMQPError.\(code): \(message)" }
}
