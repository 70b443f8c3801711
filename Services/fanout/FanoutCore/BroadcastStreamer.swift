import Foundation
import Logging
import NotifyModels
import PostgresNIO

/// Reads the audience of an event source page by page (keyset on the subscription id), so a broadcast to
/// a million devices never holds more than one page in memory.
///
/// A page is the next `pageSize` members, each looked up by its subscription's primary key (the `LIMIT 1` keeps
/// the lookup a nested loop whatever the planner's statistics say). Joined as tables, the planner chose a merge join
/// that read the subscriptions index from its start on every page, or a parallel hash join over every subscription:
/// each page cost more than the last, 14–19 s of PostgreSQL CPU in a million-device broadcast. A member whose
/// subscription expired comes back without a platform: it still moves the key and counts towards a full page.
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
                SELECT m.subscription_id, coalesce(s.platform, ''), coalesce(s.push_token, ''), s.push_keys::text,
                       coalesce(s.expires_at, 'epoch')
                FROM (SELECT subscription_id FROM event_source_members
                      WHERE app_id = \(appId) AND event_source = \(eventSource) AND subscription_id > \(after)
                      ORDER BY subscription_id LIMIT \(pageSize)) m
                LEFT JOIN LATERAL (SELECT platform, push_token, push_keys, expires_at FROM subscriptions
                                   WHERE subscription_id = m.subscription_id AND expires_at > now() LIMIT 1) s ON true
                ORDER BY m.subscription_id
                """, logger: logger)
            var devices: [SubscriptionResolver.Device] = []
            devices.reserveCapacity(pageSize)
            var rowCount = 0
            for try await row in rows {
                rowCount += 1
                var cells = row.makeIterator()
                // The page's last row is the next page's key even if its platform is unknown or its subscription expired.
                after = try cells.nextColumn().decode(UUID.self)
                guard let device = try SubscriptionResolver.Device(subscriptionId: after, reading: &cells) else { continue }
                devices.append(device)
            }
            if !devices.isEmpty { try await page(devices) }
            if rowCount < pageSize { return }
        }
    }
}
