import Foundation
import NotifyDatabase
import PostgresNIO
import Testing

/// What storage and fanout bind through `ArrayParameter`, PostgreSQL reads back: every element, in order.
@Suite(
    "array parameters in PostgreSQL",
    .enabled(if: ProcessInfo.processInfo.environment["NOTIFY_TEST_STACK"] != nil, "needs PostgreSQL: run deploy/local/test.sh"))
struct ArrayParameterRoundTripTests {
    @Test("uuid, text, int8, int4, bool and timestamptz arrays read back from PostgreSQL as bound, in order; an empty one is empty")
    func roundTrip() async throws {
        let ids = (0..<500).map { _ in UUID() }
        let texts = ["", "delivered", "Zürich ✓ 🎉", String(repeating: "x", count: 5000), "quote \" and back\\slash"]
        let int8s: [Int64] = [.min, -1, 0, 1_795_000_000, .max]
        let int4s: [Int32] = [.min, -1, 0, 410, .max]
        let bools = [true, false, false, true]
        let dates = [
            Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 946_684_799.5),
            Date(timeIntervalSince1970: 1_795_000_000.123_456), Date(timeIntervalSince1970: 4_102_444_800),
        ]
        try await NotifyStoreTestDatabase.withDatabase { client, _ in
            #expect(try await Self.values(client, "SELECT x FROM unnest(\(ArrayParameter(ids))::uuid[]) WITH ORDINALITY AS t(x, n) ORDER BY n", UUID.self) == ids)
            #expect(try await Self.values(client, "SELECT x FROM unnest(\(ArrayParameter(texts))::text[]) WITH ORDINALITY AS t(x, n) ORDER BY n", String.self) == texts)
            #expect(try await Self.values(client, "SELECT x FROM unnest(\(ArrayParameter(int8s))::int8[]) WITH ORDINALITY AS t(x, n) ORDER BY n", Int64.self) == int8s)
            #expect(try await Self.values(client, "SELECT x FROM unnest(\(ArrayParameter(int4s))::int4[]) WITH ORDINALITY AS t(x, n) ORDER BY n", Int32.self) == int4s)
            #expect(try await Self.values(client, "SELECT x FROM unnest(\(ArrayParameter(bools))::bool[]) WITH ORDINALITY AS t(x, n) ORDER BY n", Bool.self) == bools)
            let readDates = try await Self.values(
                client, "SELECT x FROM unnest(\(ArrayParameter(dates))::timestamptz[]) WITH ORDINALITY AS t(x, n) ORDER BY n", Date.self)
            #expect(readDates.count == dates.count)
            // PostgreSQL keeps microseconds.
            for (read, bound) in zip(readDates, dates) {
                #expect(abs(read.timeIntervalSince(bound)) < 0.000_001, "\(bound.timeIntervalSince1970) read back as \(read.timeIntervalSince1970)")
            }
            #expect(try await Self.values(client, "SELECT cardinality(\(ArrayParameter([UUID]()))::uuid[])", Int32.self) == [0])
        }
    }

    private static func values<Value: PostgresDecodable & Sendable>(_ client: PostgresClient, _ query: PostgresQuery, _ type: Value.Type) async throws -> [Value] {
        var values: [Value] = []
        for try await value in try await client.query(query, logger: NotifyStoreTestDatabase.logger).decode(Value.self) { values.append(value) }
        return values
    }
}
