import Foundation
import NotifyModels
import NotifyStore
import Synchronization

/// The devices fanout pushes to, held in memory: tests add users' devices and event sources' members.
public final class MemoryPushAudienceStore: PushAudienceStore {
    private struct Member {
        var userId: String
        var device: PushDevice
        var joinedAt: Date
        var parameters: [String: JSONValue]
    }

    private struct State {
        var devices: [PushUser: PushAudience] = [:]
        var members: [String: [Member]] = [:]
        var badges: [PushUser: Int] = [:]
        var badgeModes: [String: BadgeMode] = [:]
        var reads = 0
    }

    private let state = Mutex(State())
    let pageSize: Int

    public init(pageSize: Int = 5000) {
        self.pageSize = pageSize
    }

    /// Gives the user these devices at a new devices version (as a registration raises it); answers the version.
    @discardableResult
    public func setDevices(_ devices: [PushDevice], of user: PushUser) -> Int64 {
        state.withLock { state in
            let version = (state.devices[user]?.version ?? 0) + 1
            state.devices[user] = PushAudience(version: version, devices: devices)
            return version
        }
    }

    /// Puts the user's device in the app's event source, joined at `joinedAt` with `parameters`.
    public func addMember(
        _ device: PushDevice, of user: PushUser, to eventSource: String, joinedAt: Date = Date(timeIntervalSinceNow: -60),
        parameters: [String: JSONValue] = [:]
    ) {
        state.withLock {
            $0.members["\(user.appId)/\(eventSource)", default: []].append(
                Member(userId: user.userId, device: device, joinedAt: joinedAt, parameters: parameters))
        }
    }

    /// The app's badge mode and the badge a user's broadcast pushes carry unless the mode is none.
    public func setBadgeMode(_ mode: BadgeMode, appId: String) {
        state.withLock { $0.badgeModes[appId] = mode }
    }

    public func setBadge(_ badge: Int, of user: PushUser) {
        state.withLock { $0.badges[user] = badge }
    }

    /// How many times the users' devices were read (a device cache that serves them reads none).
    public var deviceReads: Int { state.withLock { $0.reads } }

    public func devices(of users: [PushUser]) async throws -> [PushAudience] {
        let now = Date()
        return state.withLock { state in
            state.reads += 1
            return users.map { user in
                let audience = state.devices[user] ?? PushAudience(version: 0, devices: [])
                return PushAudience(version: audience.version, devices: audience.devices.filter { $0.expiresAt > now })
            }
        }
    }

    public func forEachBroadcastPage(
        appId: String, eventSource: String, joinedBy: Date, memberFilter: [String: JSONValue]?, withUsers: Bool,
        _ page: (BroadcastAudiencePage) async throws -> Void
    ) async throws {
        let now = Date()
        let (members, mode, badges) = state.withLock { state in
            (state.members["\(appId)/\(eventSource)"] ?? [], state.badgeModes[appId] ?? .unread, state.badges)
        }
        let audience = members.filter { member in
            member.joinedAt <= joinedBy && member.device.expiresAt > now
                && (memberFilter ?? [:]).allSatisfy { member.parameters[$0.key] == $0.value }
        }
            .sorted { $0.device.subscriptionId.uuidString < $1.device.subscriptionId.uuidString }
        for start in stride(from: 0, to: audience.count, by: pageSize) {
            let slice = audience[start..<min(start + pageSize, audience.count)]
            try await page(BroadcastAudiencePage(
                devices: slice.map(\.device),
                badges: mode != .none ? slice.map { badges[PushUser(appId: appId, userId: $0.userId)] ?? 0 } : [],
                userIds: withUsers ? slice.map(\.userId) : [], omitsBadge: mode == .none))
        }
    }
}
