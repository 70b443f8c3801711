import Foundation
import Logging
import NotifyModels
import PostgresNIO
import Synchronization

/// Provider credentials per app, read from the database and cached for a minute.
final class CredentialStore: Sendable {
    private let client: PostgresClient
    private let logger: Logger
    private let cache = Mutex<[String: (credentials: APNsCredentials?, loadedAt: ContinuousClock.Instant)]>([:])
    private let lifetime: Duration = .seconds(60)

    init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// The app's APNs credentials, or nil when the app has none.
    func apns(appId: String) async throws -> APNsCredentials? {
        let now = ContinuousClock.now
        if let cached = cache.withLock({ $0[appId] }), now - cached.loadedAt < lifetime {
            return cached.credentials
        }
        let rows = try await client.query(
            "SELECT credentials::text FROM app_credentials WHERE app_id = \(appId) AND provider = 'apns'", logger: logger)
        var credentials: APNsCredentials?
        for try await json in rows.decode(String.self) {
            credentials = try WireCoding.makeDecoder().decode(APNsCredentials.self, from: Data(json.utf8))
        }
        cache.withLock { $0[appId] = (credentials, now) }
        return credentials
    }
}
