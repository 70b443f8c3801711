import Foundation
import Logging
import NotifyDatabase
import NotifyModels
import PostgresNIO

/// What a publish that names devices or an event source needs to know of the app's data: who owns a subscription,
/// which event sources exist, and which of a user's devices joined one. Only publishes that name a `subscriptionId`
/// or an `eventSource` ask (a publish to a user asks nothing).
public protocol TargetDirectory: Sendable {
    /// The owner (user id) of each of `ids` that is a subscription of the app.
    func owners(appId: String, of ids: [UUID]) async throws -> [UUID: String]
    /// The app's event sources among `names`, with their policies.
    func eventSources(appId: String, named names: [String]) async throws -> [String: EventSourcePolicy]
    /// The subscriptions of each of `userIds` that are in the source `name`.
    func members(appId: String, source name: String, userIds: [String]) async throws -> [String: [UUID]]
}

/// The app's subscriptions and event sources, through the read-only role.
public struct PostgresTargetDirectory: TargetDirectory {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    public func owners(appId: String, of ids: [UUID]) async throws -> [UUID: String] {
        var owners: [UUID: String] = [:]
        let rows = try await client.query(
            "SELECT subscription_id, user_id FROM subscriptions WHERE app_id = \(appId) AND subscription_id = ANY(\(ArrayParameter(ids))::uuid[])",
            logger: logger)
        for try await (id, user) in rows.decode((UUID, String).self) { owners[id] = user }
        return owners
    }

    public func eventSources(appId: String, named names: [String]) async throws -> [String: EventSourcePolicy] {
        var sources: [String: EventSourcePolicy] = [:]
        let rows = try await client.query(
            "SELECT name, policy FROM event_sources WHERE app_id = \(appId) AND name = ANY(\(ArrayParameter(names))::text[])", logger: logger)
        for try await (name, policy) in rows.decode((String, String).self) { sources[name] = EventSourcePolicy(rawValue: policy) ?? .appServer }
        return sources
    }

    public func members(appId: String, source name: String, userIds: [String]) async throws -> [String: [UUID]] {
        var members: [String: [UUID]] = [:]
        let rows = try await client.query(
            """
            SELECT s.user_id, s.subscription_id FROM event_source_members m
            JOIN subscriptions s ON s.subscription_id = m.subscription_id
            WHERE m.app_id = \(appId) AND m.event_source = \(name) AND s.user_id = ANY(\(ArrayParameter(userIds))::text[])
            ORDER BY s.registered_at
            """, logger: logger)
        for try await (user, id) in rows.decode((String, UUID).self) { members[user, default: []].append(id) }
        return members
    }
}
