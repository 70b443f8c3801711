import Foundation
import NIOCore
import NotifyDatabase
import PostgresNIO
import Testing

/// A timestamp read from a row as a `Date` and bound again through `PostgresTimestamp` is the stored value,
/// to the microsecond, where binding the `Date` itself is often a microsecond early.
@Suite("Exact timestamp parameters")
struct PostgresTimestampTests {
    @Test("100,000 stored timestamps (whole milliseconds and arbitrary microseconds, 1970 to 2100) read as Dates bind back exactly")
    func roundTrip() throws {
        var generator = SystemRandomNumberGenerator()
        var dateBoundEarly = 0
        for index in 0..<100_000 {
            // Microseconds since 2000-01-01, as PostgreSQL stores timestamptz.
            let stored = Int64.random(in: -946_684_800_000...3_155_760_000_000, using: &generator) * 1000
                + (index.isMultiple(of: 2) ? 0 : Int64.random(in: 0..<1000, using: &generator))
            var row = ByteBuffer()
            row.writeInteger(stored)
            let date = try Date(from: &row, type: .timestamptz, format: .binary, context: .default)

            #expect(bound(PostgresTimestamp(date)) == stored, "stored \(stored)")
            if bound(date) != stored { dateBoundEarly += 1 }
        }
        // Why the type exists: PostgresNIO's own Date parameter misses a good share of them.
        #expect(dateBoundEarly > 1000)
    }

    private func bound(_ value: some PostgresNonThrowingEncodable) -> Int64 {
        var buffer = ByteBuffer()
        value.encode(into: &buffer, context: .default)
        return buffer.readInteger(as: Int64.self) ?? .min
    }
}
