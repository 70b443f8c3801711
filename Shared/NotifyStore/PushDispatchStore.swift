import Foundation
import Logging
import NotifyDatabase
import NotifyModels
import PostgresNIO

/// What push-dispatch reads: an app's provider credentials (sealed), which visual fallbacks are no longer needed, the
/// Web Push and WNS endpoints registered, and an app's webhook.
public struct PushDispatchStore: Sendable {
    /// Provider credentials as stored: sealed for the app package they were stored for (`""`: the app's default ones),
    /// and whether the provider refused them.
    public struct SealedCredentials: Sendable, Equatable {
        public var sealed: String
        public var appPackage: String
        public var rejectedReason: String?
    }

    /// A subscription's push endpoint (WNS channel or Web Push endpoint).
    public struct Endpoint: Sendable, Equatable {
        public var subscriptionId: UUID
        public var appId: String
        public var platform: Platform
        public var url: String
    }

    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// The app's credentials for `platform` stored for `appPackage` (the device's identity), else its default ones.
    public func credentials(appId: String, platform: Platform, appPackage: String?) async throws -> SealedCredentials? {
        let rows = try await client.query(
            """
            SELECT secret, rejected_reason, app_package FROM app_credentials
            WHERE app_id = \(appId) AND provider = \(platform.rawValue) AND app_package IN ('', \(appPackage ?? ""))
            ORDER BY app_package DESC LIMIT 1
            """, logger: logger)
        for try await (sealed, rejected, package) in rows.decode((String, String?, String).self) {
            return SealedCredentials(sealed: sealed, appPackage: package, rejectedReason: rejected)
        }
        return nil
    }

    /// The push ids of `jobs` whose device has synced the job's change (`subscriptions.synced_sequence`) or whose
    /// subscription no longer exists.
    public func unneededFallbacks(_ jobs: [PushJob]) async throws -> Set<UUID> {
        let rows = try await client.query(
            """
            SELECT j.push FROM unnest(\(ArrayParameter(jobs.map(\.pushId)))::uuid[], \(ArrayParameter(jobs.map(\.subscriptionId)))::uuid[],
                                      \(ArrayParameter(jobs.map(\.sequence)))::int8[]) AS j(push, subscription, sequence)
            LEFT JOIN subscriptions s ON s.subscription_id = j.subscription
            WHERE s.subscription_id IS NULL OR s.synced_sequence >= j.sequence
            """, logger: logger)
        var unneeded: Set<UUID> = []
        for try await push in rows.decode(UUID.self) { unneeded.insert(push) }
        return unneeded
    }

    /// Every WNS channel and Web Push endpoint registered.
    public func pushEndpoints() async throws -> [Endpoint] {
        var found: [Endpoint] = []
        let rows = try await client.query(
            "SELECT subscription_id, app_id, platform, push_token FROM subscriptions WHERE platform IN ('wns', 'webpush')", logger: logger)
        for try await (subscriptionId, appId, platform, url) in rows.decode((UUID, String, String, String).self) {
            if let platform = Platform(rawValue: platform) { found.append(Endpoint(subscriptionId: subscriptionId, appId: appId, platform: platform, url: url)) }
        }
        return found
    }
}
