import Foundation
import Logging
import PostgresNIO

/// Waits until storage has applied a write ingest just queued, so operator and registration calls can
/// answer with what is stored (read-your-writes). Publishing stays fast: this is only for rare writes.
struct WriteVisibility: Sendable {
    let client: PostgresClient
    let logger: Logger
    var timeout: Duration = .seconds(5)

    /// Polls `query` until it returns a row; returns the first column, or nil if the write is not visible in time.
    func first<Value: PostgresDecodable & Sendable>(_ type: Value.Type, _ query: PostgresQuery) async -> Value? {
        let deadline = ContinuousClock.now + timeout
        var pause = Duration.milliseconds(2)
        while ContinuousClock.now < deadline {
            if let rows = try? await client.query(query, logger: logger),
               let value = try? await rows.decode(Value.self).first(where: { _ in true }) {
                return value
            }
            try? await Task.sleep(for: pause)
            pause = min(pause * 2, .milliseconds(50))
        }
        return nil
    }
}
