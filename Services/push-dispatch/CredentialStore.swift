import Foundation
import Logging
import NotifyModels
import PostgresNIO
import Synchronization

/// Provider credentials per app, read from the database and cached for ten seconds.
final class CredentialStore: Sendable {
    private let client: PostgresClient
    private let logger: Logger
    /// An app's credentials and whether APNs refused them (storage flags that from push feedback).
    struct Entry: Sendable {
        var credentials: APNsCredentials
        var rejectedReason: String?
    }

    private let cache = Mutex<[String: (entry: Entry?, loadedAt: ContinuousClock.Instant)]>([:])
    private let lifetime: Duration = .seconds(10)

    init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// The app's APNs credentials, or nil when the app has none.
    func apns(appId: String) async throws -> Entry? {
        let now = ContinuousClock.now
        if let cached = cache.withLock({ $0[appId] }), now - cached.loadedAt < lifetime {
            return cached.entry
        }
        let rows = try await client.query(
            "SELECT credentials::text, rejected_reason FROM app_credentials WHERE app_id = \(appId) AND provider = 'apns'", logger: logger)
        var entry: Entry?
        for try await (json, rejected) in rows.decode((String, String?).self) {
            entry = Entry(credentials: try WireCoding.makeDecoder().decode(APNsCredentials.self, from: Data(json.utf8)), rejectedReason: rejected)
        }
        cache.withLock { $0[appId] = (entry, now) }
        return entry
    }
}
