import Foundation
import Logging
import NotifyModels
import NotifyStore
import PostgresNIO
import Synchronization

/// One provider's credentials per app, read from the database (sealed: opened with the service's secret keys) and
/// cached for ten seconds
/// (one second while they are flagged as refused, so new ones stored by the operator are used at once).
final class CredentialStore<Credentials: Decodable & Sendable>: Sendable {
    /// An app's credentials and whether the provider refused them (storage flags that from push feedback).
    struct Entry: Sendable {
        var credentials: Credentials
        var rejectedReason: String?
    }

    private let platform: Platform
    private let store: PushDispatchStore
    private let keyring: SecretKeyring
    private let logger: Logger
    private let cache = Mutex<[String: (entry: Entry?, loadedAt: ContinuousClock.Instant)]>([:])
    private let lifetime: Duration = .seconds(10)
    private let refusedLifetime: Duration = .seconds(1)

    init(platform: Platform, client: PostgresClient, keyring: SecretKeyring, logger: Logger) {
        self.platform = platform
        self.store = PushDispatchStore(client: client, logger: logger)
        self.keyring = keyring
        self.logger = logger
    }

    /// The app's credentials for the identity `appPackage` (the device's), else its default ones; nil when it has none
    /// for this provider.
    func credentials(appId: String, appPackage: String?) async throws -> Entry? {
        let now = ContinuousClock.now
        let key = appPackage.map { appId + "\u{1F}" + $0 } ?? appId
        if let cached = cache.withLock({ $0[key] }),
            now - cached.loadedAt < (cached.entry?.rejectedReason == nil ? lifetime : refusedLifetime) {
            return cached.entry
        }
        var entry: Entry?
        if let stored = try await store.credentials(appId: appId, platform: platform, appPackage: appPackage) {
            let json = try keyring.open(stored.sealed, for: .providerCredentials(appId: appId, provider: platform, appPackage: stored.appPackage))
            entry = Entry(credentials: try WireCoding.makeDecoder().decode(Credentials.self, from: json), rejectedReason: stored.rejectedReason)
        }
        cache.withLock { $0[key] = (entry, now) }
        return entry
    }
}
