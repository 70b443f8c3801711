import Foundation
import Logging
import NotifyDatabase
import NotifyModels
import PostgresNIO

/// Which visual fallbacks are no longer needed: their device synced the notification after its shoulder tap (ingest
/// records how far each device synced, `subscriptions.synced_sequence`, when it reads such notifications).
struct DeviceSyncCheck: Sendable {
    let client: PostgresClient
    let logger: Logger

    /// The push ids of `jobs` whose device has synced the job's change.
    func synced(_ jobs: [PushJob]) async throws -> Set<UUID> {
        let rows = try await client.query(
            """
            SELECT j.push FROM unnest(\(ArrayParameter(jobs.map(\.pushId)))::uuid[], \(ArrayParameter(jobs.map(\.subscriptionId)))::uuid[],
                                      \(ArrayParameter(jobs.map(\.sequence)))::int8[]) AS j(push, subscription, sequence)
            JOIN subscriptions s ON s.subscription_id = j.subscription AND s.synced_sequence >= j.sequence
            """, logger: logger)
        var synced: Set<UUID> = []
        for try await push in rows.decode(UUID.self) { synced.insert(push) }
        return synced
    }
}
