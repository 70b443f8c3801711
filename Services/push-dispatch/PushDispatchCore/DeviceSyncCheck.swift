import Foundation
import Logging
import NotifyModels
import NotifyStore
import PostgresNIO

/// Which visual fallbacks are no longer needed: their device synced the notification after its shoulder tap (ingest
/// records how far each device synced, `subscriptions.synced_sequence`, when it reads such notifications), or their
/// subscription is gone (unregistered, or its token registered by another user since: the alert is the previous
/// user's, and the device must not show it).
struct DeviceSyncCheck: Sendable {
    let store: PushDispatchStore

    init(client: PostgresClient, logger: Logger) {
        store = PushDispatchStore(client: client, logger: logger)
    }

    /// The push ids of `jobs` whose device has synced the job's change or whose subscription no longer exists.
    func unneeded(_ jobs: [PushJob]) async throws -> Set<UUID> {
        try await store.unneededFallbacks(jobs)
    }
}
