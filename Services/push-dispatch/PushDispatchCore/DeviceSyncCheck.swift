import Foundation
import Logging
import NotifyDatabase
import NotifyModels
import PostgresNIO

/// Which visual fallbacks are no longer needed: their device synced the notification after its shoulder tap (ingest
/// records how far each device synced, `subscriptions.synced_sequence`, when it reads such notifications), or their
/// subscription is gone (unregistered, or its token registered by another user since: the alert is the previous
/// user's, and the device must not show it).
struct DeviceSyncCheck: Sendable {
    let client: PostgresClient
    let logger: Logger

    /// The push ids of `jobs` whose device has synced the job's change or whose subscription no longer exists.
    func unneeded(_ jobs: [PushJob]) async throws -> Set<UUID> {
        let rows = try await client.query(
            """
            SELECT j.push FROM unnest(\(ArrayParameter(jobs.map(\.pushId)))::uuid[], \(ArrayParameter(jobs.map(\.subscriptionId)))::uuid[],
                                      \(ArrayParameter(jobs.map(\.sequence)))::int8[]) AS j(push, subscription, sequence)
            LEFT JOIN subscriptions s ON s.subscription_id = j.subscription
            WHERE s.subscription_id IS NULL OR s.synced_sequence >= j.sequence
            """, logger: logger)
        var unneeded: Set<UUID> = []
        for try await push in rows.decode(UUID.self) { unneeded.insert(push) }
        return unneeded
    }
}
