import Foundation
import Logging
import NotifyDatabase
import NotifyModels
import NotifyStore

/// An event source of an app with `devices` APNs subscribers seeded straight into PostgreSQL (`loadgen broadcast`, and
/// the broadcasting neighbour of `loadgen neighbours`), and the broadcast to it.
struct BroadcastAudience: Sendable {
    let client: JSONClient
    let ingestURL: String
    let app: (appId: String, apiKey: String)
    let eventSource: String
    let devices: Int

    private struct Defined: Decodable { let name: String }
    private struct Accepted: Decodable { let id: String }

    /// Defines the event source and seeds its subscribers through `databaseURL` (the writer role) in batches of
    /// 10,000, then VACUUM ANALYZE; answers the time it all took.
    func seed(databaseURL: String) async throws -> Duration {
        _ = try await client.call(
            .POST, "\(ingestURL)/v1/apps/\(app.appId)/event-sources", bearer: app.apiKey,
            json: EventSourceRequest(name: eventSource, policy: .appServer), as: Defined.self)
        var logger = Logger(label: "loadgen")
        logger.logLevel = .warning
        let database = try DatabaseURL.makeClient(databaseURL, maximumConnections: 2, logger: logger)
        let seeding = BenchmarkSeeding(client: database, logger: logger)
        let running = Task { await database.run() }
        defer { running.cancel() }
        let started = ContinuousClock.now
        var seeded = 0
        while seeded < devices {
            let count = min(10_000, devices - seeded)
            try await seeding.subscriptions(
                appId: app.appId, users: (0..<count).map { "broadcast-user-\(seeded + $0)" },
                tokens: (0..<count).map { _ in StackSetup.randomDeviceToken() }, eventSource: eventSource)
            seeded += count
        }
        // The audience of a real broadcast was not inserted a moment before: settled as autovacuum would settle it.
        try await seeding.settleAudienceTables()
        return ContinuousClock.now - started
    }

    /// Publishes one notification to the event source through ingest; answers its id once accepted.
    func publish() async throws -> String {
        let body: [String: Any] = [
            "eventSource": eventSource,
            "payload": ["visualContent": ["title": "Broadcast", "body": "To \(devices) devices"]],
        ]
        let answer = try await client.send(.POST, "\(ingestURL)/v1/apps/\(app.appId)/notifications", bearer: app.apiKey,
                                           body: try JSONSerialization.data(withJSONObject: body))
        return try JSONClient.decode(Accepted.self, answer, method: .POST, url: "publish").id
    }
}
