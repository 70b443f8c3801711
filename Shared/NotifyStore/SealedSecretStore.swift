import Logging
import NotifyModels
import PostgresNIO

/// The stored secrets (provider credentials, client signing keys, webhook secrets, poll sources' Authorization
/// headers), each sealed for its purpose: found where they are not sealed with a given key, and replaced one by one.
public struct SealedSecretStore: Sendable {
    /// A column holding one sealed secret per row, and the purpose it is sealed for.
    public struct Column: Sendable {
        let table: String
        let column: String
        /// The row's key columns besides app_id (app_credentials: provider and app_package; poll_sources: name).
        let keys: [String]
        /// The purpose of a row's value, from its app id and its `keys` columns' values.
        let purpose: @Sendable (_ appId: String, _ keys: [String]) -> SecretPurpose?

        /// Where it is stored, for logs.
        public var name: String { "\(table).\(column)" }
    }

    /// A value found in a column: its row and the sealed text.
    public struct Sealed: Sendable {
        public var appId: String
        public var value: String
        /// The row's `keys` columns' values.
        public var keys: [String]
        /// What it is sealed for (nil: a row this build cannot name a purpose for, e.g. an unknown provider).
        public var purpose: SecretPurpose?
    }

    /// Every column that holds a sealed secret.
    public static let columns: [Column] = [
        Column(table: "app_credentials", column: "secret", keys: ["provider", "app_package"]) { appId, keys in
            Platform(rawValue: keys[0]).map { .providerCredentials(appId: appId, provider: $0, appPackage: keys[1]) }
        },
        Column(table: "apps", column: "client_signing_key", keys: []) { appId, _ in .clientSigningKey(appId: appId) },
        Column(table: "apps", column: "previous_client_signing_key", keys: []) { appId, _ in .clientSigningKey(appId: appId) },
        Column(table: "app_webhooks", column: "secret", keys: []) { appId, _ in .webhookSecret(appId: appId) },
        Column(table: "poll_sources", column: "authorization_header", keys: ["name"]) { appId, keys in
            .pollSourceAuthorization(appId: appId, name: keys[0])
        },
    ]

    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// The values of `column` that do not start with `prefix` (the active key's).
    public func values(in column: Column, notStartingWith prefix: String) async throws -> [Sealed] {
        var binds = PostgresBindings()
        binds.append(prefix)
        let rows = try await client.query(
            PostgresQuery(
                unsafeSQL: """
                    SELECT app_id, \(column.column), ARRAY[\((column.keys.isEmpty ? ["''"] : column.keys).joined(separator: ", "))]::text[]
                    FROM \(column.table)
                    WHERE \(column.column) IS NOT NULL AND left(\(column.column), length($1)) <> $1
                    """,
                binds: binds),
            logger: logger)
        var found: [Sealed] = []
        for try await (appId, value, keys) in rows.decode((String, String, [String]).self) {
            found.append(Sealed(appId: appId, value: value, keys: keys, purpose: column.purpose(appId, keys)))
        }
        return found
    }

    /// Replaces `sealed` in `column` with `newValue`, unless someone changed it meanwhile.
    public func replace(_ sealed: Sealed, in column: Column, with newValue: String) async throws {
        var update = PostgresBindings()
        update.append(newValue)
        update.append(sealed.appId)
        update.append(sealed.value)
        var sql = "UPDATE \(column.table) SET \(column.column) = $1 WHERE app_id = $2 AND \(column.column) = $3"
        for (position, key) in column.keys.enumerated() {
            update.append(sealed.keys[position])
            sql += " AND \(key) = $\(position + 4)"
        }
        try await client.query(PostgresQuery(unsafeSQL: sql, binds: update), logger: logger)
    }
}
