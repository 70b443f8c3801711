/// What the service asks of the broker's administration (storage, which is not exposed to the internet): users with the
/// least privilege an app needs, and policies that bound queues. `RabbitMQManagementClient` does it through RabbitMQ's management HTTP API; every call is
/// idempotent (a PUT sets, a DELETE of what is gone succeeds), so a retried request converges.
public protocol BrokerAdministration: Sendable {
    /// Creates `user`, or sets its password if it exists, from the password's hash in RabbitMQ's default form
    /// (`rabbit_password_hashing_sha256`: base64 of a 4-byte salt and SHA-256(salt ++ password)), so the password itself
    /// never reaches the caller; no management tags (it cannot log in to the UI).
    func putUser(_ user: String, passwordHash: String) async throws(BrokerAdminError)
    /// Sets what `user` may do in the service's virtual host.
    func putPermissions(_ permissions: BrokerPermissions, of user: String) async throws(BrokerAdminError)
    /// Deletes `user` (RabbitMQ closes its connections); succeeds when there is no such user.
    func deleteUser(_ user: String) async throws(BrokerAdminError)
    /// Creates or replaces a policy in the service's virtual host.
    func putPolicy(_ policy: BrokerPolicy) async throws(BrokerAdminError)
}

/// The three regular expressions of a RabbitMQ permission: which resources a user may configure (declare, delete),
/// write (publish to an exchange) and read (consume from a queue).
public struct BrokerPermissions: Sendable, Equatable {
    public var configure: String
    public var write: String
    public var read: String

    public init(configure: String, write: String, read: String) {
        self.configure = configure
        self.write = write
        self.read = read
    }

    /// An app server's: publish to `exchange` only (not the default exchange, not any other), and declare and consume
    /// only queues named `<user>.reply.<anything>`. Direct reply-to (`amq.rabbitmq.reply-to`) needs no permission.
    public static func appPublisher(user: String, exchange: String) -> BrokerPermissions {
        let replyQueues = "^\(escaped(user))\\.reply\\..+$"
        return BrokerPermissions(configure: replyQueues, write: "^\(escaped(exchange))$", read: replyQueues)
    }

    /// `text` with every character that means something in a regular expression escaped.
    static func escaped(_ text: String) -> String {
        var result = ""
        for character in text {
            if "\\^$.|?*+()[]{}".contains(character) { result.append("\\") }
            result.append(character)
        }
        return result
    }
}

/// A RabbitMQ policy: a definition (`max-length`, `message-ttl`, `overflow`, …) applied to the queues or exchanges
/// whose names match `pattern`. Policies change a queue's limits without declaring it again.
public struct BrokerPolicy: Sendable, Equatable {
    public enum Value: Sendable, Equatable {
        case integer(Int)
        case string(String)
    }

    public var name: String
    public var pattern: String
    public var definition: [String: Value]
    public var priority: Int
    /// `queues`, `exchanges` or `all`.
    public var applyTo: String

    public init(name: String, pattern: String, definition: [String: Value], priority: Int = 0, applyTo: String = "queues") {
        self.name = name
        self.pattern = pattern
        self.definition = definition
        self.priority = priority
        self.applyTo = applyTo
    }

    /// A policy for the one queue named `queue`.
    public static func forQueue(_ queue: String, name: String, definition: [String: Value]) -> BrokerPolicy {
        BrokerPolicy(name: name, pattern: "^\(BrokerPermissions.escaped(queue))$", definition: definition)
    }
}

/// A management call that failed. Its description names the call and the answer, never a password.
public struct BrokerAdminError: Error, Sendable, CustomStringConvertible {
    public enum Code: Sendable, Equatable {
        /// No answer (connection refused, timeout).
        case unreachable
        /// 401/403: the management credentials are wrong or lack the `administrator` tag.
        case unauthorized
        /// Any other answer than success.
        case refused(status: Int)
    }

    public var code: Code
    /// What was being done, e.g. "create user app_x-1".
    public var operation: String
    public var detail: String

    public init(code: Code, operation: String, detail: String) {
        self.code = code
        self.operation = operation
        self.detail = detail
    }

    public var description: String {
        switch code {
        case .unreachable: "RabbitMQ management API unreachable (\(operation)): \(detail)"
        case .unauthorized: "RabbitMQ management API refused the service's credentials (\(operation)): \(detail)"
        case .refused(let status): "RabbitMQ management API answered \(status) (\(operation)): \(detail)"
        }
    }
}
