import Logging
import PostgresNIO

/// Reads of the stores' tables that no store makes and only tests need: raw rows, to prove what storage wrote or did
/// not write (a broker user's hash cleared).
public struct StoreInspection: Sendable {
    /// A broker user's row in `app_broker_users`.
    public struct BrokerUserRow: Sendable, Equatable {
        /// RabbitMQ's hash of its password, kept until storage created the user.
        public var passwordHash: String?
        /// Whether storage created it in RabbitMQ.
        public var provisioned: Bool

        public init(passwordHash: String?, provisioned: Bool) {
            self.passwordHash = passwordHash
            self.provisioned = provisioned
        }
    }

    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// The broker user's row; nil when there is none.
    public func brokerUser(_ user: String) async throws -> BrokerUserRow? {
        let rows = try await client.query(
            "SELECT password_hash, provisioned_at IS NOT NULL FROM app_broker_users WHERE user_name = \(user)", logger: logger)
        for try await (passwordHash, provisioned) in rows.decode((String?, Bool).self) {
            return BrokerUserRow(passwordHash: passwordHash, provisioned: provisioned)
        }
        return nil
    }
}
