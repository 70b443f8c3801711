import Foundation
import Logging
import NotifyModels
import PostgresNIO

/// Finds the active device subscriptions of many users in one query.
struct SubscriptionResolver: Sendable {
    /// A device to push to.
    struct Device: Sendable {
        var subscriptionId: UUID
        var platform: Platform
        var pushToken: String
        var keys: WebPushKeys?

        /// A row's platform and Web Push keys (stored as JSON text); nil for a platform this build does not know.
        init?(subscriptionId: UUID, platform: String, pushToken: String, keys: String?) {
            guard let platform = Platform(rawValue: platform) else { return nil }
            self.subscriptionId = subscriptionId
            self.platform = platform
            self.pushToken = pushToken
            self.keys = keys.flatMap { try? WebPushKeys(decodingJSON: Data($0.utf8)) }
        }
    }

    let client: PostgresClient
    let logger: Logger

    /// The devices of each user, in the order of `users`. Rows name their user by its position in the query's
    /// arrays rather than by app and user id, so that no id is decoded or hashed per device.
    func devices(of users: [UserKey]) async throws -> [[Device]] {
        guard !users.isEmpty else { return [] }
        let rows = try await client.query(
            """
            SELECT u.position, s.subscription_id, s.platform, s.push_token, s.push_keys::text
            FROM unnest(\(users.map(\.appId))::text[], \(users.map(\.userId))::text[]) WITH ORDINALITY AS u(app, usr, position)
            JOIN subscriptions s ON s.app_id = u.app AND s.user_id = u.usr
            WHERE s.expires_at > now()
            """, logger: logger)
        var devices = [[Device]](repeating: [], count: users.count)
        for try await (position, subscriptionId, platform, token, keys) in rows.decode((Int, UUID, String, String, String?).self) {
            guard let device = Device(subscriptionId: subscriptionId, platform: platform, pushToken: token, keys: keys) else { continue }
            devices[position - 1].append(device)
        }
        return devices
    }
}

/// A user of an app.
struct UserKey: Hashable, Sendable {
    var appId: String
    var userId: String
}
