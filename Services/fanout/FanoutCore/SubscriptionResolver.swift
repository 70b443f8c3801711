import Foundation
import NotifyModels
import NotifyStore

/// Finds the active device subscriptions of many users: from the `DeviceCache` where the devices read before are
/// still current, the rest in one read of the store.
struct SubscriptionResolver: Sendable {
    let store: any PushAudienceStore
    let cache: DeviceCache

    /// The devices of each user, in the order of `users`, current as of at least `versions` (the devices versions
    /// the users' change events carry; nil: whatever is current).
    func devices(of users: [PushUser], atLeast versions: [Int64?]) async throws -> [[PushDevice]] {
        var found = cache.devices(of: users, atLeast: versions)
        let missing = found.indices.filter { found[$0] == nil }
        guard !missing.isEmpty else { return found.map { $0 ?? [] } }
        let read = try await store.devices(of: missing.map { users[$0] })
        for (index, audience) in zip(missing, read) { found[index] = audience.devices }
        cache.store(zip(missing, read).map { (users[$0], DeviceCache.Entry(version: $1.version, devices: $1.devices)) })
        return found.map { $0 ?? [] }
    }
}
