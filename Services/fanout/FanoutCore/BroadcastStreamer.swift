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

    /// A page of the audience: the devices, and with each its user's badge where the app's badge counts broadcasts.
    struct Page {
        var devices: [SubscriptionResolver.Device] = []
        /// Parallel to `devices`; empty where the app's badge does not count broadcasts.
        var badges: [Int] = []
        /// Parallel to `devices`: each device's user; empty unless asked for (`withUsers`).
        var userIds: [String] = []
        /// The app's badge mode is none: its pushes carry no badge.
        var omitsBadge = false
    }

    /// Calls `page` with each page of the event source's active subscriptions that joined by `joinedBy` (the
    /// broadcast's time: a device that joined later does not have it in its feed, so it is not pushed), in order;
    /// `withUsers`: each page names its devices' users (for members with push options of their own).
    func forEachPage(
        appId: String, eventSource: String, joinedBy: Date, withUsers: Bool = false, _ page: (Page) async throws -> Void
    ) async throws {
        let mode = try await client.query("SELECT badge_mode FROM apps WHERE app_id = \(appId)", logger: logger)
            .decode(String.self).first { _ in true }.flatMap(BadgeMode.init(rawValue:)) ?? .unread
        let countsBroadcasts = mode == .unreadIncludingBroadcasts
        // The badge of a member: the user's unread notifications and unread broadcasts (`unread_broadcasts`).
        let badge = countsBroadcasts
            ? ", coalesce((SELECT unread FROM unread_counts c WHERE c.app_id = $1 AND c.user_id = s.user_id), 0) + unread_broadcasts($1, s.user_id)"
            : ""
        let user = withUsers ? ", coalesce(s.user_id, '')" : ""
        var after = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        while true {
            var bindings = PostgresBindings()
            bindings.append(appId)
            bindings.append(eventSource)
            bindings.append(after)
            bindings.append(joinedBy)
            bindings.append(pageSize)
            let rows = try await client.query(
                PostgresQuery(
                    unsafeSQL: """
                    SELECT m.subscription_id, coalesce(s.platform, ''), coalesce(s.push_token, ''), s.push_keys::text,
                           coalesce(s.expires_at, 'epoch'), s.app_package\(badge)\(user)
                    FROM (SELECT subscription_id FROM event_source_members
                          WHERE app_id = $1 AND event_source = $2 AND subscription_id > $3 AND joined_at <= $4
                          ORDER BY subscription_id LIMIT $5) m
                    LEFT JOIN LATERAL (SELECT platform, push_token, push_keys, expires_at, app_package, user_id FROM subscriptions
                                       WHERE subscription_id = m.subscription_id AND expires_at > now() LIMIT 1) s ON true
                    ORDER BY m.subscription_id
                    """, binds: bindings),
                logger: logger)
            var found = Page(omitsBadge: mode == .none)
            found.devices.reserveCapacity(pageSize)
            var rowCount = 0
            for try await row in rows {
                rowCount += 1
                var cells = row.makeIterator()
                // The page's last row is the next page's key even if its platform is unknown or its subscription expired.
                after = try cells.nextColumn().decode(UUID.self)
                guard let device = try SubscriptionResolver.Device(subscriptionId: after, reading: &cells) else { continue }
                found.devices.append(device)
                if countsBroadcasts { found.badges.append(Int(try cells.nextColumn().decode(Int64?.self) ?? 0)) }
                if withUsers { found.userIds.append(try cells.nextColumn().decode(String.self)) }
            }
            if !found.devices.isEmpty { try await page(found) }
            if rowCount < pageSize { return }
        }
    }
}
