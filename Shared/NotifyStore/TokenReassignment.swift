import Foundation
import Logging
import NotifyDatabase
import NotifyModels
import PostgresNIO

/// A push token registered by another user than the one whose subscription holds it: the device changed hands. The
/// old subscription is removed as a whole, so the new user's registration starts a new one and nothing of the
/// previous user's stays with the device: its event-source memberships (each reported as `eventSource.left`, reason
/// `reassigned`), how far it synced (`synced_sequence`, which decides the raw-to-visual fallback) and its id, which the
/// previous user's pending fallbacks name (push-dispatch drops a fallback whose subscription is gone). The previous
/// user's `subscription.deleted` (reason `reassigned`) is recorded. Removing the row raises the previous user's
/// devices version (`device_versions`), and the new row the new user's, so fanout reads both users' devices again.
struct TokenReassignment {
    let connection: PostgresConnection
    let logger: Logger

    /// The reason the webhook events of a token changing hands carry.
    static let reason = "reassigned"

    /// Removes the subscription holding the token (`appId`, `platform`, `pushToken`) if a user other than `userId` holds
    /// it; answers the id it had (nil when the token is free or already the user's). The memberships the previous user
    /// lost are added to `ended`.
    func release(
        appId: String, platform: Platform, pushToken: String, takenBy userId: String, ending ended: inout [BroadcastRemoval.EndedMembership]
    ) async throws -> UUID? {
        // Locked: a device joining a source meanwhile waits, so no membership is removed unreported.
        let held = try await connection.query(
            """
            SELECT subscription_id, user_id FROM subscriptions
            WHERE app_id = \(appId) AND platform = \(platform.rawValue) AND push_token = \(pushToken) AND user_id <> \(userId)
            FOR UPDATE
            """, logger: logger)
        var previous: (subscriptionId: UUID, userId: String)?
        for try await row in held.decode((UUID, String).self) { previous = row }
        guard let (subscriptionId, previousUser) = previous else { return nil }

        let memberships = try await connection.query(
            "DELETE FROM event_source_members WHERE subscription_id = \(subscriptionId) RETURNING event_source, joined_at", logger: logger)
        var sources: [String] = []
        for try await (source, joinedAt) in memberships.decode((String, Date).self) {
            sources.append(source)
            ended.append(.init(appId: appId, userId: previousUser, eventSource: source, joinedAt: joinedAt))
        }
        try await webhooks.record(.eventSourceLeft, sources.sorted().map {
            .init(appId: appId, userId: previousUser, subscriptionId: subscriptionId, eventSource: $0, reason: Self.reason)
        })
        try await connection.query("DELETE FROM subscriptions WHERE subscription_id = \(subscriptionId)", logger: logger)
        try await webhooks.record(.subscriptionDeleted, [
            .init(appId: appId, userId: previousUser, subscriptionId: subscriptionId, platform: platform.rawValue, reason: Self.reason)
        ])
        logger.debug("a push token changed hands", metadata: ["appId": "\(appId)", "subscriptionId": "\(subscriptionId.lowercasedString)"])
        return subscriptionId
    }

    private var webhooks: WebhookOutbox { WebhookOutbox(connection: connection, logger: logger) }
}
