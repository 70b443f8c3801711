import Foundation
import NotifyModels
import NotifyStore

/// What the targets of one publish body resolved to.
struct ResolvedTargets: Sendable {
    var owners: [UUID: String] = [:]
    var sources: [String: EventSourcePolicy] = [:]
    /// source → user → the user's subscriptions in it.
    var members: [String: [String: [UUID]]] = [:]

    /// Looks up what `requests` name, in as few queries as there are kinds of names; nothing when they name none.
    static func resolve(_ requests: [NotificationRequest], appId: String, in directory: any TargetDirectory) async throws(APIFailure) -> ResolvedTargets {
        let subscriptionIds = Set(requests.compactMap { $0.subscriptionId.flatMap(UUID.init(uuidString:)) })
        let sources = Set(requests.compactMap(\.eventSource))
        var resolved = ResolvedTargets()
        guard !subscriptionIds.isEmpty || !sources.isEmpty else { return resolved }
        do {
            if !subscriptionIds.isEmpty { resolved.owners = try await directory.owners(appId: appId, of: Array(subscriptionIds)) }
            if !sources.isEmpty { resolved.sources = try await directory.eventSources(appId: appId, named: Array(sources)) }
            var usersBySource: [String: Set<String>] = [:]
            for request in requests {
                if let source = request.eventSource, let user = request.userId { usersBySource[source, default: []].insert(user) }
            }
            for (source, users) in usersBySource where resolved.sources[source] != nil {
                resolved.members[source] = try await directory.members(appId: appId, source: source, userIds: Array(users))
            }
        } catch {
            throw APIFailure.databaseUnavailable
        }
        return resolved
    }
}
