import Logging
import Metrics
import NotifyModels
import NotifyRuntime
import PostgresNIO
import ServiceLifecycle

/// Seals with the active key every stored secret that is not: values an older key sealed (the key-encryption key was
/// rotated) and values stored before secrets were sealed. Runs as storage starts (after the migrations) and then
/// periodically; each value is replaced only if no one changed it meanwhile. `notify_secrets_on_retired_keys` counts
/// the values still not on the active key after a pass (0 once an old key can be removed; values that do not open,
/// e.g. sealed with a key no longer given, stay counted and are logged without their content).
struct SecretResealer: Service {
    let client: PostgresClient
    let keyring: SecretKeyring
    let interval: Duration
    let logger: Logger
    private let remaining = Gauge(label: "notify_secrets_on_retired_keys")

    /// A column holding one sealed secret per row, and the purpose it is sealed for.
    struct SealedColumn {
        var table: String
        var column: String
        /// The row's key columns besides app_id (app_credentials: provider and app_package; poll_sources: name).
        var keys: [String] = []
        /// The purpose of a row's value, from its app id and its `keys` columns' values.
        var purpose: @Sendable (_ appId: String, _ keys: [String]) -> SecretPurpose?
    }

    static let columns: [SealedColumn] = [
        SealedColumn(table: "app_credentials", column: "secret", keys: ["provider", "app_package"]) { appId, keys in
            Platform(rawValue: keys[0]).map { .providerCredentials(appId: appId, provider: $0, appPackage: keys[1]) }
        },
        SealedColumn(table: "apps", column: "client_signing_key") { appId, _ in .clientSigningKey(appId: appId) },
        SealedColumn(table: "apps", column: "previous_client_signing_key") { appId, _ in .clientSigningKey(appId: appId) },
        SealedColumn(table: "app_webhooks", column: "secret") { appId, _ in .webhookSecret(appId: appId) },
        SealedColumn(table: "poll_sources", column: "authorization_header", keys: ["name"]) { appId, keys in
            .pollSourceAuthorization(appId: appId, name: keys[0])
        },
    ]

    func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                remaining.record(try await resealAll())
            } catch {
                logger.warning("re-sealing stored secrets failed; will try again", metadata: ["error": "\(String(reflecting: error))"])
            }
            await pauseUnlessShuttingDown(for: interval)
        }
    }

    /// One pass over every sealed column; answers how many values are still not on the active key.
    func resealAll() async throws -> Int {
        var resealed = 0
        var left = 0
        for column in Self.columns {
            let counts = try await reseal(column)
            resealed += counts.resealed
            left += counts.left
        }
        if resealed > 0 {
            logger.notice("re-sealed stored secrets with the active key", metadata: ["count": "\(resealed)", "key": "\(keyring.activeKeyId)"])
        }
        return left
    }

    private func reseal(_ column: SealedColumn) async throws -> (resealed: Int, left: Int) {
        let activePrefix = SecretKeyring.prefix + keyring.activeKeyId + ":"
        var binds = PostgresBindings()
        binds.append(activePrefix)
        let rows = try await client.query(
            PostgresQuery(
                unsafeSQL: """
                    SELECT app_id, \(column.column), ARRAY[\((column.keys.isEmpty ? ["''"] : column.keys).joined(separator: ", "))]::text[]
                    FROM \(column.table)
                    WHERE \(column.column) IS NOT NULL AND left(\(column.column), length($1)) <> $1
                    """,
                binds: binds),
            logger: logger)
        var found: [(appId: String, value: String, keys: [String])] = []
        for try await row in rows.decode((String, String, [String]).self) { found.append(row) }
        var resealed = 0
        for row in found {
            guard let purpose = column.purpose(row.appId, row.keys) else { continue }
            let plaintext: [UInt8]
            do {
                plaintext = Array(try keyring.open(row.value, for: purpose))
            } catch {
                logger.error(
                    "a stored secret does not open with the service's secret keys",
                    metadata: ["table": "\(column.table)", "column": "\(column.column)", "app": "\(row.appId)", "error": "\(error)"])
                continue
            }
            var update = PostgresBindings()
            update.append(keyring.seal(plaintext, for: purpose))
            update.append(row.appId)
            update.append(row.value)
            var sql = "UPDATE \(column.table) SET \(column.column) = $1 WHERE app_id = $2 AND \(column.column) = $3"
            for (position, key) in column.keys.enumerated() {
                update.append(row.keys[position])
                sql += " AND \(key) = $\(position + 4)"
            }
            try await client.query(PostgresQuery(unsafeSQL: sql, binds: update), logger: logger)
            resealed += 1
        }
        return (resealed, found.count - resealed)
    }
}
