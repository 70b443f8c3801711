import Foundation
import Logging
import NotifyModels
import PostgresNIO

/// Reads the audience of an event source page by page (keyset on the subscription id), so a broadcast to
/// a million devices never holds more than one page in memory.
///
/// The key bounds both sides of the join: PostgreSQL does not carry `m.subscription_id > key` over to
/// `s.subscription_id`, and without it a merge join reads the subscriptions index from its start on every page,
/// so each page costs more than the last (a million-device broadcast spent 19 s of PostgreSQL CPU that way).
struct BroadcastStreamer: Sendable {
    let client: PostgresClient
    let logger: Logger
    var pageSize = 5000

    /// Calls `page` with each page of the event source's active subscriptions, in order.
    func forEachPage(appId: String, eventSource: String, _ page: ([SubscriptionResolver.Device]) async throws -> Void) async throws {
        var after = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        while true {
            let rows = try await client.query(
                """
                SELECT s.subscription_id, s.platform, s.push_token, s.push_keys::text, s.expires_at
                FROM event_source_members m JOIN subscriptions s ON s.subscription_id = m.subscription_id
                WHERE m.app_id = \(appId) AND m.event_source = \(eventSource) AND m.subscription_id > \(after)
                  AND s.subscription_id > \(after) AND s.expires_at > now()
                ORDER BY m.subscription_id LIMIT \(pageSize)
                """, logger: logger)
            var devices: [SubscriptionResolver.Device] = []
            devices.reserveCapacity(pageSize)
            var rowCount = 0
            for try await row in rows {
                rowCount += 1
                var cells = row.makeIterator()
                // The page's last row is the next page's key even if its platform is unknown.
                after = try cells.nextColumn().decode(UUID.self)
                guard let device = try SubscriptionResolver.Device(subscriptionId: after, reading: &cells) else { continue }
                devices.append(device)
            }
            if !devices.isEmpty { try await page(devices) }
            if rowCount < pageSize { return }
        }
    }
}
