import Logging
import Metrics
import NotifyModels
import NotifyRuntime
import NotifyStore
import ServiceLifecycle

/// Seals with the active key every stored secret that is not: values an older key sealed (the key-encryption key was
/// rotated) and values stored before secrets were sealed. Runs as storage starts (after the migrations) and then
/// periodically; each value is replaced only if no one changed it meanwhile. `notify_secrets_on_retired_keys` counts
/// the values still not on the active key after a pass (0 once an old key can be removed; values that do not open,
/// e.g. sealed with a key no longer given, stay counted and are logged without their content).
struct SecretResealer: Service {
    let store: SealedSecretStore
    let keyring: SecretKeyring
    let interval: Duration
    let logger: Logger
    private let remaining = Gauge(label: "notify_secrets_on_retired_keys")

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
        for column in SealedSecretStore.columns {
            let counts = try await reseal(column)
            resealed += counts.resealed
            left += counts.left
        }
        if resealed > 0 {
            logger.notice("re-sealed stored secrets with the active key", metadata: ["count": "\(resealed)", "key": "\(keyring.activeKeyId)"])
        }
        return left
    }

    private func reseal(_ column: SealedSecretStore.Column) async throws -> (resealed: Int, left: Int) {
        let found = try await store.values(in: column, notStartingWith: SecretKeyring.prefix + keyring.activeKeyId + ":")
        var resealed = 0
        for sealed in found {
            guard let purpose = sealed.purpose else { continue }
            let plaintext: [UInt8]
            do {
                plaintext = Array(try keyring.open(sealed.value, for: purpose))
            } catch {
                logger.error(
                    "a stored secret does not open with the service's secret keys",
                    metadata: ["column": "\(column.name)", "app": "\(sealed.appId)", "error": "\(error)"])
                continue
            }
            try await store.replace(sealed, in: column, with: keyring.seal(plaintext, for: purpose))
            resealed += 1
        }
        return (resealed, found.count - resealed)
    }
}
