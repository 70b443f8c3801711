import Foundation
import Logging
import NotifyDatabase
import NotifyModels
import PostgresNIO

/// Finds the active device subscriptions of many users: from the `DeviceCache` where the devices read before are
/// still current, the rest in one query.
struct SubscriptionResolver: Sendable {
    /// A device to push to.
    struct Device: Sendable {
        var subscriptionId: UUID
        var platform: Platform
        var pushToken: String
        var keys: WebPushKeys?
        var expiresAt: Date
        /// The app identity the device registered with (`appPackage`), which picks its credentials.
        var appPackage: String?

        /// A row's platform and Web Push keys (stored as JSON text); nil for a platform this build does not know.
        init?(subscriptionId: UUID, platform: String, pushToken: String, keys: String?, expiresAt: Date, appPackage: String? = nil) {
            guard let platform = Platform(rawValue: platform) else { return nil }
            self.subscriptionId = subscriptionId
            self.platform = platform
            self.pushToken = pushToken
            self.keys = keys.flatMap { try? Self.keysDecoder.decode(WebPushKeys.self, from: Data($0.utf8)) }
            self.expiresAt = expiresAt
            self.appPackage = appPackage
        }

        private static let keysDecoder = JSONDecoder()

        /// The device of subscription `subscriptionId` (a column already read), from the next five columns: platform,
        /// push token, Web Push keys as text, expiry, app package. Cell by cell with the concrete decoders: a tuple `decode` looks
        /// up generic metadata for every row.
        init?(subscriptionId: UUID, reading cells: inout PostgresRow.Iterator) throws {
            try self.init(
                subscriptionId: subscriptionId, platform: cells.nextColumn().decode(String.self),
                pushToken: cells.nextColumn().decode(String.self), keys: cells.nextColumn().decode(String?.self),
                expiresAt: cells.nextColumn().decode(Date.self), appPackage: cells.nextColumn().decode(String?.self))
        }
    }

    let client: PostgresClient
    let cache: DeviceCache
    let logger: Logger

    /// The devices of each user, in the order of `users`, current as of at least `versions` (the devices versions
    /// the users' change events carry; nil: whatever is current).
    func devices(of users: [UserKey], atLeast versions: [Int64?]) async throws -> [[Device]] {
        var found = cache.devices(of: users, atLeast: versions)
        let missing = found.indices.filter { found[$0] == nil }
        guard !missing.isEmpty else { return found.map { $0 ?? [] } }
        let read = try await read(missing.map { users[$0] })
        for (index, entry) in zip(missing, read) { found[index] = entry.devices }
        cache.store(zip(missing, read).map { (users[$0], $1) })
        return found.map { $0 ?? [] }
    }

    /// Each user's active devices and the version of the user's devices they are, in one query and one snapshot.
    /// Rows name their user by its position in the query's arrays rather than by app and user id, so that no id
    /// is decoded or hashed per device; a user without devices is one row without a subscription.
    private func read(_ users: [UserKey]) async throws -> [DeviceCache.Entry] {
        let rows = try await client.query(
            """
            SELECT u.position, coalesce(v.version, 0), s.subscription_id, s.platform, s.push_token, s.push_keys::text, s.expires_at, s.app_package
            FROM unnest(\(ArrayParameter(users.map(\.appId)))::text[], \(ArrayParameter(users.map(\.userId)))::text[]) WITH ORDINALITY AS u(app, usr, position)
            LEFT JOIN device_versions v ON v.app_id = u.app AND v.user_id = u.usr
            LEFT JOIN subscriptions s ON s.app_id = u.app AND s.user_id = u.usr AND s.expires_at > now()
            """, logger: logger)
        var versions = [Int64](repeating: 0, count: users.count)
        var devices = [[Device]](repeating: [], count: users.count)
        for try await row in rows {
            var cells = row.makeIterator()
            let index = try cells.nextColumn().decode(Int.self) - 1
            versions[index] = try cells.nextColumn().decode(Int64.self)
            guard let subscriptionId = try cells.nextColumn().decode(UUID?.self),
                  let device = try Device(subscriptionId: subscriptionId, reading: &cells) else { continue }
            devices[index].append(device)
        }
        return zip(versions, devices).map { DeviceCache.Entry(version: $0, devices: $1) }
    }
}

/// A user of an app.
struct UserKey: Hashable, Sendable {
    var appId: String
    var userId: String
}

extension PostgresRow.Iterator {
    /// The next cell of a row whose columns the query in this file names (fewer is a programming error).
    mutating func nextColumn() -> PostgresCell {
        guard let cell = next() else { preconditionFailure("a row has fewer columns than its query selects") }
        return cell
    }
}
