import Foundation
import NotifyDatabase
import PostgresNIO
import Testing

/// Storage's transactions run on their connection's event loop (`withTransactionOnEventLoop`): what a caller
/// relies on from `withTransaction` still holds there.
@Suite(
    "transactions on the connection's event loop",
    .enabled(if: ProcessInfo.processInfo.environment["NOTIFY_TEST_STACK"] != nil, "needs PostgreSQL: run deploy/local/test.sh"))
struct EventLoopTransactionTests {
    struct Refused: Error {}

    private static let logger = NotifyStoreTestDatabase.logger

    /// The rows of `table`.
    private static func count(_ table: String, on client: PostgresClient) async throws -> Int64? {
        try await client.query(PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(table)"), logger: logger).decode(Int64.self).first { _ in true }
    }

    @Test("the body runs on the connection's event loop, also after each reply; what it wrote is committed, in one transaction")
    func commits() async throws {
        let table = "el_transaction_\(UUID().uuidString.prefix(8).lowercased())"
        try await NotifyStoreTestDatabase.withDatabase { client, _ in
            try await client.query(PostgresQuery(unsafeSQL: "CREATE TABLE \(table) (n int)"), logger: Self.logger)
            let (onLoop, transactions) = try await client.withTransactionOnEventLoop(logger: Self.logger) { connection in
                var onLoop = [connection.eventLoop.inEventLoop]
                var transactions: Set<Int64> = []
                for n in 1...3 {
                    try await connection.query(PostgresQuery(unsafeSQL: "INSERT INTO \(table) VALUES (\(n))"), logger: Self.logger)
                    onLoop.append(connection.eventLoop.inEventLoop)
                    for try await id in try await connection.query("SELECT txid_current()", logger: Self.logger).decode(Int64.self) {
                        transactions.insert(id)
                    }
                    onLoop.append(connection.eventLoop.inEventLoop)
                }
                return (onLoop, transactions)
            }
            #expect(onLoop.allSatisfy { $0 }, "on the event loop before and after each reply: \(onLoop)")
            #expect(transactions.count == 1)
            #expect(try await Self.count(table, on: client) == 3)
            try await client.query(PostgresQuery(unsafeSQL: "DROP TABLE \(table)"), logger: Self.logger)
        }
    }

    @Test("an error thrown by the body rolls back what it wrote and reaches the caller as the transaction's closure error")
    func rollsBack() async throws {
        let table = "el_transaction_\(UUID().uuidString.prefix(8).lowercased())"
        try await NotifyStoreTestDatabase.withDatabase { client, _ in
            try await client.query(PostgresQuery(unsafeSQL: "CREATE TABLE \(table) (n int)"), logger: Self.logger)
            await #expect {
                try await client.withTransactionOnEventLoop(logger: Self.logger) { connection in
                    try await connection.query(PostgresQuery(unsafeSQL: "INSERT INTO \(table) VALUES (1)"), logger: Self.logger)
                    throw Refused()
                }
            } throws: { error in
                (error as? PostgresTransactionError)?.closureError is Refused
            }
            #expect(try await Self.count(table, on: client) == 0)
            try await client.query(PostgresQuery(unsafeSQL: "DROP TABLE \(table)"), logger: Self.logger)
        }
    }
}
