import Foundation
import NotifyModels
import NotifyStore
import Synchronization

/// Devices, event sources and their members held in memory: a `DeviceStore` and the `TargetDirectory` publishes
/// resolve against. Tests fill it with `apply`, given the commands storage would have applied.
public final class MemoryDeviceStore: DeviceStore, TargetDirectory {
    private struct Device {
        var subscription: DeviceSubscription
        var sources: Set<String> = []
        /// The parameters the device holds in each source it joined with some.
        var parameters: [String: [String: JSONValue]] = [:]
    }

    private struct Source {
        var record: EventSourceRecord
    }

    private struct State {
        /// The app's devices in registration order.
        var devices: [String: [Device]] = [:]
        var sources: [String: [String: Source]] = [:]
    }

    private let state = Mutex(State())

    public init() {}

    /// Applies a device or event-source command as storage would; other commands are left alone.
    public func apply(_ action: StorageCommand.Action) {
        state.withLock { state in
            switch action {
            case .registerSubscription(let subscription):
                var devices = state.devices[subscription.appId] ?? []
                let replaced = devices.firstIndex { $0.subscription.subscriptionId == subscription.replacesSubscriptionId }
                    .map { devices.remove(at: $0).sources } ?? []
                var sources = replaced.union(subscription.eventSources ?? [])
                if let same = devices.firstIndex(where: {
                    $0.subscription.platform == subscription.platform && $0.subscription.pushToken == subscription.pushToken
                }) {
                    // The same user's token keeps its subscription; another user's is removed with its memberships.
                    if devices[same].subscription.userId == subscription.userId {
                        sources.formUnion(devices[same].sources)
                        var kept = subscription
                        kept.subscriptionId = devices[same].subscription.subscriptionId
                        devices[same] = Device(subscription: kept, sources: sources)
                        state.devices[subscription.appId] = devices
                        return
                    }
                    devices.remove(at: same)
                }
                devices.append(Device(subscription: subscription, sources: sources))
                state.devices[subscription.appId] = devices
            case .unregisterSubscription(let appId, let userId, let subscriptionId):
                state.devices[appId]?.removeAll { $0.subscription.subscriptionId == subscriptionId && $0.subscription.userId == userId }
            case .putEventSource(let record):
                state.sources[record.appId, default: [:]][record.name] = Source(record: record)
            case .deleteEventSource(let appId, let name):
                state.sources[appId]?[name] = nil
                for index in state.devices[appId]?.indices ?? [].indices { state.devices[appId]?[index].sources.remove(name) }
            case .joinEventSource(let appId, let name, let ids, _), .leaveEventSource(let appId, let name, let ids):
                let join = if case .joinEventSource = action { true } else { false }
                let parameters: [String: JSONValue]? = if case .joinEventSource(_, _, _, let given) = action { given } else { nil }
                guard state.sources[appId]?[name] != nil else { return }
                for index in state.devices[appId]?.indices ?? [].indices where ids.contains(state.devices[appId]![index].subscription.subscriptionId) {
                    if join {
                        state.devices[appId]![index].sources.insert(name)
                        if let parameters { state.devices[appId]![index].parameters[name] = parameters }
                    } else {
                        state.devices[appId]![index].sources.remove(name)
                        state.devices[appId]![index].parameters[name] = nil
                    }
                }
            default:
                break
            }
        }
    }

    // MARK: DeviceStore

    public func subscriptionId(appId: String, userId: String, platform: Platform, pushToken: String, registeredSince: Date?) async throws -> UUID? {
        state.withLock { state in
            state.devices[appId]?.first { device in
                device.subscription.userId == userId && device.subscription.platform == platform && device.subscription.pushToken == pushToken
                    && registeredSince.map { device.subscription.registeredAt >= $0 } ?? true
            }?.subscription.subscriptionId
        }
    }

    public func devices(appId: String, userId: String) async throws -> [DeviceListing] {
        state.withLock { state in
            (state.devices[appId] ?? []).filter { $0.subscription.userId == userId }.map { device in
                DeviceListing(
                    subscriptionId: device.subscription.subscriptionId, platform: device.subscription.platform.rawValue,
                    pushToken: device.subscription.pushToken, displayName: device.subscription.displayName,
                    expiresAt: device.subscription.expirationDateTime, eventSources: device.sources.sorted())
            }
        }
    }

    public func owner(appId: String, subscriptionId: UUID) async throws -> String? {
        state.withLock { state in state.devices[appId]?.first { $0.subscription.subscriptionId == subscriptionId }?.subscription.userId }
    }

    public func eventSources(appId: String, named name: String?) async throws -> [EventSourceView] {
        state.withLock { state in
            (state.sources[appId] ?? [:]).values.filter { name == nil || $0.record.name == name }.sorted { $0.record.name < $1.record.name }.map { source in
                let members = (state.devices[appId] ?? []).filter { $0.sources.contains(source.record.name) }
                return EventSourceView(
                    name: source.record.name, policy: source.record.policy, description: source.record.description,
                    memberDevices: members.count, memberUsers: Set(members.map(\.subscription.userId)).count, createdAt: source.record.createdAt)
            }
        }
    }

    public func memberships(appId: String, userId: String) async throws -> [String: MembershipListing] {
        state.withLock { state in
            var found: [String: MembershipListing] = [:]
            for device in state.devices[appId] ?? [] where device.subscription.userId == userId {
                for source in device.sources {
                    found[source, default: MembershipListing(subscriptionIds: [])].subscriptionIds.append(device.subscription.subscriptionId)
                    if let parameters = device.parameters[source] { found[source]?.parameters = parameters }
                }
            }
            return found
        }
    }

    // MARK: TargetDirectory

    public func owners(appId: String, of ids: [UUID]) async throws -> [UUID: String] {
        state.withLock { state in
            Dictionary(uniqueKeysWithValues: (state.devices[appId] ?? []).filter { ids.contains($0.subscription.subscriptionId) }.map {
                ($0.subscription.subscriptionId, $0.subscription.userId)
            })
        }
    }

    public func eventSources(appId: String, named names: [String]) async throws -> [String: EventSourcePolicy] {
        state.withLock { state in (state.sources[appId] ?? [:]).filter { names.contains($0.key) }.mapValues(\.record.policy) }
    }

    public func members(appId: String, source name: String, userIds: [String]) async throws -> [String: [UUID]] {
        state.withLock { state in
            var found: [String: [UUID]] = [:]
            for device in state.devices[appId] ?? [] where device.sources.contains(name) && userIds.contains(device.subscription.userId) {
                found[device.subscription.userId, default: []].append(device.subscription.subscriptionId)
            }
            return found
        }
    }
}
