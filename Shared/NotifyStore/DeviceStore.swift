import Foundation
import Logging
import NotifyDatabase
import NotifyModels
import PostgresNIO

/// A user's devices (subscriptions) and the app's event sources as the HTTP API shows them.
/// `PostgresDeviceStore` reads the shared tables; NotifyStoreTesting holds one in memory.
public protocol DeviceStore: Sendable {
    /// The user's subscription holding the token (registered at `registeredSince` or later, when given).
    func subscriptionId(appId: String, userId: String, platform: Platform, pushToken: String, registeredSince: Date?) async throws -> UUID?
    /// The user's devices, oldest registration first, each with the event sources it is in.
    func devices(appId: String, userId: String) async throws -> [DeviceListing]
    /// The user a subscription of the app belongs to.
    func owner(appId: String, subscriptionId: UUID) async throws -> String?
    /// The app's event sources (or the one named) by name, with their member counts.
    func eventSources(appId: String, named name: String?) async throws -> [EventSourceView]
    /// The event sources the user's devices are in, with those devices (oldest registration first).
    func memberships(appId: String, userId: String) async throws -> [String: MembershipListing]
}

/// A user's membership in an event source: the devices in it, and the parameters of the one that joined last.
public struct MembershipListing: Sendable, Equatable {
    public var subscriptionIds: [UUID]
    public var parameters: [String: JSONValue]?

    public init(subscriptionIds: [UUID], parameters: [String: JSONValue]? = nil) {
        self.subscriptionIds = subscriptionIds
        self.parameters = parameters
    }
}

/// A device as its user lists it.
public struct DeviceListing: Sendable, Equatable {
    public var subscriptionId: UUID
    public var platform: String
    public var pushToken: String
    public var displayName: String?
    public var expiresAt: Date
    /// The event sources the device is in, by name.
    public var eventSources: [String]

    public init(subscriptionId: UUID, platform: String, pushToken: String, displayName: String?, expiresAt: Date, eventSources: [String]) {
        self.subscriptionId = subscriptionId
        self.platform = platform
        self.pushToken = pushToken
        self.displayName = displayName
        self.expiresAt = expiresAt
        self.eventSources = eventSources
    }
}

/// Devices and event sources in `subscriptions`, `event_sources` and `event_source_members`.
public struct PostgresDeviceStore: DeviceStore {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    public func subscriptionId(appId: String, userId: String, platform: Platform, pushToken: String, registeredSince: Date?) async throws -> UUID? {
        try await client.query(
            """
            SELECT subscription_id FROM subscriptions
            WHERE app_id = \(appId) AND platform = \(platform.rawValue) AND push_token = \(pushToken) AND user_id = \(userId)
              AND (\(registeredSince)::timestamptz IS NULL OR registered_at >= \(registeredSince))
            """, logger: logger
        ).decode(UUID.self).first(where: { _ in true })
    }

    public func devices(appId: String, userId: String) async throws -> [DeviceListing] {
        var listed: [DeviceListing] = []
        let rows = try await client.query(
            """
            SELECT s.subscription_id, s.platform, s.push_token, s.display_name, s.expires_at,
                   coalesce(array_agg(m.event_source ORDER BY m.event_source) FILTER (WHERE m.event_source IS NOT NULL), '{}')
            FROM subscriptions s LEFT JOIN event_source_members m ON m.subscription_id = s.subscription_id
            WHERE s.app_id = \(appId) AND s.user_id = \(userId)
            GROUP BY s.subscription_id ORDER BY s.registered_at
            """, logger: logger)
        for try await (id, platform, token, name, expires, sources) in rows.decode((UUID, String, String, String?, Date, [String]).self) {
            listed.append(DeviceListing(subscriptionId: id, platform: platform, pushToken: token, displayName: name, expiresAt: expires, eventSources: sources))
        }
        return listed
    }

    public func owner(appId: String, subscriptionId: UUID) async throws -> String? {
        try await client.query(
            "SELECT user_id FROM subscriptions WHERE app_id = \(appId) AND subscription_id = \(subscriptionId)", logger: logger
        ).decode(String.self).first(where: { _ in true })
    }

    public func eventSources(appId: String, named name: String?) async throws -> [EventSourceView] {
        var found: [EventSourceView] = []
        let rows = try await client.query(
            """
            SELECT e.name, e.policy, e.description, e.created_at, count(m.subscription_id), count(DISTINCT s.user_id)
            FROM event_sources e
            LEFT JOIN event_source_members m ON m.app_id = e.app_id AND m.event_source = e.name
            LEFT JOIN subscriptions s ON s.subscription_id = m.subscription_id
            WHERE e.app_id = \(appId) AND (\(name)::text IS NULL OR e.name = \(name))
            GROUP BY e.name, e.policy, e.description, e.created_at ORDER BY e.name
            """, logger: logger)
        for try await (name, policy, description, created, devices, users) in rows.decode((String, String, String?, Date, Int64, Int64).self) {
            found.append(EventSourceView(
                name: name, policy: EventSourcePolicy(rawValue: policy) ?? .appServer, description: description,
                memberDevices: Int(devices), memberUsers: Int(users), createdAt: created))
        }
        return found
    }

    public func memberships(appId: String, userId: String) async throws -> [String: MembershipListing] {
        var found: [String: MembershipListing] = [:]
        var lastJoined: [String: Date] = [:]
        let decoder = WireCoding.makeDecoder()
        let rows = try await client.query(
            """
            SELECT m.event_source, m.subscription_id, m.parameters::text, m.joined_at FROM event_source_members m
            JOIN subscriptions s ON s.subscription_id = m.subscription_id
            WHERE m.app_id = \(appId) AND s.user_id = \(userId) ORDER BY s.registered_at
            """, logger: logger)
        for try await (source, id, parameters, joinedAt) in rows.decode((String, UUID, String?, Date).self) {
            found[source, default: MembershipListing(subscriptionIds: [])].subscriptionIds.append(id)
            guard joinedAt >= lastJoined[source] ?? .distantPast else { continue }
            lastJoined[source] = joinedAt
            found[source]?.parameters = try parameters.map { try decoder.decode([String: JSONValue].self, from: Data($0.utf8)) }
        }
        return found
    }
}
