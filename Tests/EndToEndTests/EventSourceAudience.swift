import Foundation
import NotifyModels
import NotifyStore
import PostgresNIO

/// Big event-source audiences for broadcast tests, seeded straight into PostgreSQL with `BenchmarkSeeding` (registering
/// each device through the API would take minutes), and read back in the order a broadcast pages through them.
enum EventSourceAudience {
    /// Adds `count` APNs members to the app's event source, users `<userPrefix>1`..., each with a random push token and
    /// a subscription active for a day, and the membership parameters `parameters` gives member `n` (from 1), if any;
    /// 10,000 a statement, as `BenchmarkSeeding` is measured with. Answers the members' push tokens, in order.
    @discardableResult
    static func seed(
        _ count: Int, userPrefix: String, of source: String, in app: TestApp, on client: PostgresClient,
        parameters: ((Int) -> [String: JSONValue])? = nil
    ) async throws -> [String] {
        let seeding = BenchmarkSeeding(client: client, logger: testLogger)
        var tokens: [String] = []
        for first in stride(from: 1, through: count, by: 10_000) {
            let numbers = Array(first...min(first + 9_999, count))
            let users = numbers.map { "\(userPrefix)\($0)" }
            let batch = users.map { _ in randomHex(bytes: 32) }
            try await seeding.subscriptions(
                appId: app.appId, users: users, tokens: batch, eventSource: source, parameters: parameters.map { numbers.map($0) })
            tokens += batch
        }
        return tokens
    }

    /// The source's members with an active subscription, in the order a broadcast pages through them (fanout's
    /// `PushAudienceStore`).
    static func members(of source: String, in app: TestApp, on client: PostgresClient) async throws -> [PushDevice] {
        var members: [PushDevice] = []
        try await PostgresPushAudienceStore(client: client, logger: testLogger).forEachBroadcastPage(
            appId: app.appId, eventSource: source, joinedBy: Date(), memberFilter: nil, withUsers: false
        ) { page in members += page.devices }
        return members
    }
}
