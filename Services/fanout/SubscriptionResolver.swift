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
    }

    let client: PostgresClient
    let logger: Logger

    func devices(of users: Set<UserKey>) async throws -> [UserKey: [Device]] {
        guard !users.isEmpty else { return [:] }
        let appIds = users.map(\.appId)
        let userIds = users.map(\.userId)
        let rows = try await client.query(
            """
            SELECT s.app_id, s.user_id, s.subscription_id, s.platform, s.push_token, s.push_keys::text
            FROM subscriptions s
            JOIN unnest(\(appIds)::text[], \(userIds)::text[]) AS u(app, usr) ON s.app_id = u.app AND s.user_id = u.usr
            WHERE s.expires_at > now()
            """, logger: logger)
        var result: [UserKey: [Device]] = [:]
        let decoder = JSONDecoder()
        for try await (appId, userId, subscriptionId, platform, token, keys) in rows.decode((String, String, UUID, String, String, String?).self) {
            guard let platform = Platform(rawValue: platform) else { continue }
            let webPushKeys = keys.flatMap { try? decoder.decode(WebPushKeys.self, from: Data($0.utf8)) }
            result[UserKey(appId: appId, userId: userId), default: []].append(
                Device(subscriptionId: subscriptionId, platform: platform, pushToken: token, keys: webPushKeys))
        }
        return result
    }
}

/// A user of an app.
struct UserKey: Hashable, Sendable {
    var appId: String
    var userId: String
}
