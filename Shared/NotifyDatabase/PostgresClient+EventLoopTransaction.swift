import Logging
import PostgresNIO

extension PostgresClient {
    /// Runs `body` in a transaction on a leased connection, on the connection's event loop
    /// (`EventLoopTaskExecutor`). Errors as `withTransaction`'s: a `PostgresTransactionError`.
    public func withTransactionOnEventLoop<Result: Sendable>(
        logger: Logger, _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await withConnection { connection in
            try await withTaskExecutorPreference(EventLoopTaskExecutor(connection.eventLoop)) {
                try await connection.withTransaction(logger: logger) { try await body($0) }
            }
        }
    }
}
