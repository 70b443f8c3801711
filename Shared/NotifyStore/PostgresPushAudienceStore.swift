import Foundation
import Logging
import NotifyDatabase
import NotifyModels
import PostgresNIO

/// The devices fanout pushes to, from `subscriptions`, `device_versions` and `event_source_members`.
///
/// An audience page is the next `pageSize` members, each looked up by its subscription's primary key (the `LIMIT 1`
/// keeps the lookup a nested loop whatever the planner's statistics say). Joined as tables, the planner chose a merge
/// join that read the subscriptions index from its start on every page, or a parallel hash join over every
/// subscription: each page cost more than the last, 14–19 s of PostgreSQL CPU in a million-device broadcast. A member
/// whose subscription expired comes back without a platform: it still moves the key and counts towards a full page.
public struct PostgresPushAudienceStore: PushAudienceStore {
    let client: PostgresClient
    let logger: Logger
    let pageSize: Int

    public init(client: PostgresClient, logger: Logger, pageSize: Int = 5000) {
        self.client = client
        self.logger = logger
        self.pageSize = pageSize
    }

    /// Rows name their user by its position in the query's arrays rather than by app and user id, so that no id is
    /// decoded or hashed per device; a user without devices is one row without a subscription.
    public func devices(of users: [PushUser]) async throws -> [PushAudience] {
        let rows = try await client.query(
            """
            SELECT u.position, coalesce(v.version, 0), s.subscription_id, s.platform, s.push_token, s.push_keys::text, s.expires_at, s.app_package
            FROM unnest(\(ArrayParameter(users.map(\.appId)))::text[], \(ArrayParameter(users.map(\.userId)))::text[]) WITH ORDINALITY AS u(app, usr, position)
            LEFT JOIN device_versions v ON v.app_id = u.app AND v.user_id = u.usr
            LEFT JOIN subscriptions s ON s.app_id = u.app AND s.user_id = u.usr AND s.expires_at > now()
            """, logger: logger)
        var versions = [Int64](repeating: 0, count: users.count)
        var devices = [[PushDevice]](repeating: [], count: users.count)
        for try await row in rows {
            var cells = row.makeIterator()
            let index = try cells.nextColumn().decode(Int.self) - 1
            versions[index] = try cells.nextColumn().decode(Int64.self)
            guard let subscriptionId = try cells.nextColumn().decode(UUID?.self),
                  let device = try PushDevice(subscriptionId: subscriptionId, reading: &cells) else { continue }
            devices[index].append(device)
        }
        return zip(versions, devices).map { PushAudience(version: $0, devices: $1) }
    }

    public func forEachBroadcastPage(
        appId: String, eventSource: String, joinedBy: Date, memberFilter: [String: JSONValue]?, withUsers: Bool,
        _ page: (BroadcastAudiencePage) async throws -> Void
    ) async throws {
        let mode = try await client.query("SELECT badge_mode FROM apps WHERE app_id = \(appId)", logger: logger)
            .decode(String.self).first { _ in true }.flatMap(BadgeMode.init(rawValue:)) ?? .unread
        // Each member's badge as the app's mode counts it: the count `user_states` gives a notification's events, as an
        // expression per row. Joining `user_states` for the page's users instead cost PostgreSQL about 10 µs more per
        // member (68 against 18 ms a page of 5,000); these lookups about 3 (32-38 ms), measured 2026-11-27 on 200,000
        // seeded members with the machine busy.
        let badge = Self.badgeExpression(mode).map { ", \($0)" } ?? ""
        let user = withUsers ? ", coalesce(p.user_id, '')" : ""
        // Only with a filter does the page read the members' rows (their parameters); else it stays an index-only scan.
        let filter = try memberFilter.map(JSONColumn.text)
        let matching = filter == nil ? "" : "AND parameters @> $6::jsonb"
        var after = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        while true {
            var bindings = PostgresBindings()
            bindings.append(appId)
            bindings.append(eventSource)
            bindings.append(after)
            bindings.append(joinedBy)
            bindings.append(pageSize)
            if let filter { bindings.append(filter) }
            let rows = try await client.query(
                PostgresQuery(
                    unsafeSQL: """
                    WITH page AS (
                        SELECT m.subscription_id, coalesce(s.platform, '') AS platform, coalesce(s.push_token, '') AS push_token,
                               s.push_keys::text AS push_keys, coalesce(s.expires_at, 'epoch') AS expires_at, s.app_package, s.user_id
                        FROM (SELECT subscription_id FROM event_source_members
                              WHERE app_id = $1 AND event_source = $2 AND subscription_id > $3 AND joined_at <= $4 \(matching)
                              ORDER BY subscription_id LIMIT $5) m
                        LEFT JOIN LATERAL (SELECT platform, push_token, push_keys, expires_at, app_package, user_id FROM subscriptions
                                           WHERE subscription_id = m.subscription_id AND expires_at > now() LIMIT 1) s ON true
                    )
                    SELECT p.subscription_id, p.platform, p.push_token, p.push_keys, p.expires_at, p.app_package\(badge)\(user)
                    FROM page p
                    ORDER BY p.subscription_id
                    """, binds: bindings),
                logger: logger)
            var found = BroadcastAudiencePage(omitsBadge: mode == .none)
            found.devices.reserveCapacity(pageSize)
            var rowCount = 0
            for try await row in rows {
                rowCount += 1
                var cells = row.makeIterator()
                // The page's last row is the next page's key even if its platform is unknown or its subscription expired.
                after = try cells.nextColumn().decode(UUID.self)
                guard let device = try PushDevice(subscriptionId: after, reading: &cells) else { continue }
                found.devices.append(device)
                if mode != .none { found.badges.append(Int(try cells.nextColumn().decode(Int64?.self) ?? 0)) }
                if withUsers { found.userIds.append(try cells.nextColumn().decode(String.self)) }
            }
            if !found.devices.isEmpty { try await page(found) }
            if rowCount < pageSize { return }
        }
    }
}

extension PostgresPushAudienceStore {
    /// The badge of the page's member `p` (app `$1`) as `mode` counts it, as `user_states` does (schema migration 34);
    /// nil where the mode shows none.
    static func badgeExpression(_ mode: BadgeMode) -> String? {
        let count: String
        switch mode {
        case .none:
            return nil
        case .unread, .unreadIncludingBroadcasts:
            count = "coalesce((SELECT c.unread FROM unread_counts c WHERE c.app_id = $1 AND c.user_id = p.user_id), 0)"
        case .unreadGroups, .unreadGroupsIncludingBroadcasts:
            count = """
                coalesce((SELECT sum(CASE WHEN g.group_key = '' THEN g.unread ELSE 1 END) FROM unread_group_counts g
                          WHERE g.app_id = $1 AND g.user_id = p.user_id AND g.unread > 0), 0)
                """
        case .external, .externalIncludingBroadcasts:
            count = "coalesce((SELECT e.badge FROM external_badges e WHERE e.app_id = $1 AND e.user_id = p.user_id), 0)"
        }
        return "(\(count)\(mode.countsBroadcasts ? " + unread_broadcasts($1, p.user_id)" : ""))::int8"
    }
}

extension PushDevice {
    /// The device of subscription `subscriptionId` (a column already read), from the next five columns: platform, push
    /// token, Web Push keys as text, expiry, app package. Cell by cell with the concrete decoders: a tuple `decode` looks
    /// up generic metadata for every row.
    init?(subscriptionId: UUID, reading cells: inout PostgresRow.Iterator) throws {
        try self.init(
            subscriptionId: subscriptionId, platform: cells.nextColumn().decode(String.self),
            pushToken: cells.nextColumn().decode(String.self), keys: cells.nextColumn().decode(String?.self),
            expiresAt: cells.nextColumn().decode(Date.self), appPackage: cells.nextColumn().decode(String?.self))
    }
}

extension PostgresRow.Iterator {
    /// The next cell of a row whose columns the query names (fewer is a programming error).
    mutating func nextColumn() -> PostgresCell {
        guard let cell = next() else { preconditionFailure("a row has fewer columns than its query selects") }
        return cell
    }
}
