import Foundation
import Logging
import PostgresNIO

/// Writes that fake, in a test's time, what the API only makes happen after days: a subscription expired, a command's
/// record gone as the retention purge forgets it.
public struct DatabaseFixtures: Sendable {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Expires the subscription a day ago, as if its registration had lapsed.
    public func expireSubscription(_ id: UUID) async throws {
        try await client.query("UPDATE subscriptions SET expires_at = now() - interval '1 day' WHERE subscription_id = \(id)", logger: logger)
    }

    /// Forgets that the command was applied (its `applied_commands` record), as the retention purge does; answers
    /// whether it was recorded.
    public func forgetAppliedCommand(_ id: UUID) async throws -> Bool {
        try await client.query("DELETE FROM applied_commands WHERE command_id = \(id) RETURNING 1", logger: logger).collect().count == 1
    }
}
