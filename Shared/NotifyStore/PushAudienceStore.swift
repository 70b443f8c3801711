import Foundation
import NotifyModels

/// The devices fanout pushes to: each user's active devices, and an event source's audience page by page.
/// `PostgresPushAudienceStore` reads the shared tables; NotifyStoreTesting holds one in memory.
public protocol PushAudienceStore: Sendable {
    /// Each user's active devices and the version of the user's devices they are (`device_versions`), in the order of
    /// `users`, all read in one snapshot.
    func devices(of users: [PushUser]) async throws -> [PushAudience]

    /// Calls `page` with each page of the event source's active subscriptions that joined by `joinedBy`, in order;
    /// `withUsers`: each page names its devices' users. Unless the app's badge mode is none, each device comes with its
    /// user's badge as the mode counts it. `memberFilter` (a broadcast's `where`): only the members whose parameters
    /// hold every pair.
    func forEachBroadcastPage(
        appId: String, eventSource: String, joinedBy: Date, memberFilter: [String: JSONValue]?, withUsers: Bool,
        _ page: (BroadcastAudiencePage) async throws -> Void
    ) async throws
}

/// A user of an app.
public struct PushUser: Hashable, Sendable {
    public var appId: String
    public var userId: String

    public init(appId: String, userId: String) {
        self.appId = appId
        self.userId = userId
    }
}

/// A user's active devices and the version of the user's set of devices they were read at.
public struct PushAudience: Sendable {
    public var version: Int64
    public var devices: [PushDevice]

    public init(version: Int64, devices: [PushDevice]) {
        self.version = version
        self.devices = devices
    }
}

/// A device to push to.
public struct PushDevice: Sendable, Equatable {
    public var subscriptionId: UUID
    public var platform: Platform
    public var pushToken: String
    public var keys: WebPushKeys?
    public var expiresAt: Date
    /// The app identity the device registered with (`appPackage`), which picks its credentials.
    public var appPackage: String?

    public init(subscriptionId: UUID, platform: Platform, pushToken: String, keys: WebPushKeys? = nil, expiresAt: Date, appPackage: String? = nil) {
        self.subscriptionId = subscriptionId
        self.platform = platform
        self.pushToken = pushToken
        self.keys = keys
        self.expiresAt = expiresAt
        self.appPackage = appPackage
    }

    /// A row's platform and Web Push keys (stored as JSON text); nil for a platform this build does not know and for
    /// one that is not pushed (`polling`).
    public init?(subscriptionId: UUID, platform: String, pushToken: String, keys: String?, expiresAt: Date, appPackage: String? = nil) {
        guard let platform = Platform(rawValue: platform), platform.isPushed else { return nil }
        self.init(
            subscriptionId: subscriptionId, platform: platform, pushToken: pushToken,
            keys: keys.flatMap { try? Self.keysDecoder.decode(WebPushKeys.self, from: Data($0.utf8)) }, expiresAt: expiresAt, appPackage: appPackage)
    }

    private static let keysDecoder = JSONDecoder()
}

/// A page of an event source's audience: the devices, and with each its user's badge unless the app shows none.
public struct BroadcastAudiencePage: Sendable {
    public var devices: [PushDevice] = []
    /// Parallel to `devices`; empty where the app's badge mode is none.
    public var badges: [Int] = []
    /// Parallel to `devices`: each device's user; empty unless asked for (`withUsers`).
    public var userIds: [String] = []
    /// The app's badge mode is none: its pushes carry no badge.
    public var omitsBadge = false

    public init(devices: [PushDevice] = [], badges: [Int] = [], userIds: [String] = [], omitsBadge: Bool = false) {
        self.devices = devices
        self.badges = badges
        self.userIds = userIds
        self.omitsBadge = omitsBadge
    }
}
