import Foundation
import NIOCore
import PostgresNIO

/// A `timestamptz` parameter bound exactly, as whole microseconds: for a position read from a row and bound again,
/// such as a page token's.
///
/// Binding the `Date` read from the row does not give back the same value: PostgresNIO reads a timestamp as a
/// floating-point `Date` and truncates it to microseconds when writing one, so about a quarter of all timestamps
/// come back a microsecond early. A keyset page then skips the rows that share its last row's time, or repeats
/// that row. Rounding the `Date` to the nearest microsecond recovers the stored value, and this writes that value as it is.
public struct PostgresTimestamp: PostgresNonThrowingEncodable, Sendable, Hashable {
    public let microsecondsSince1970: Int64

    /// PostgreSQL counts from 2000-01-01 UTC.
    private static let postgresEpoch = Date(timeIntervalSince1970: 946_684_800)
    private static let postgresEpochMicroseconds: Int64 = 946_684_800_000_000

    public init(microsecondsSince1970: Int64) {
        self.microsecondsSince1970 = microsecondsSince1970
    }

    /// The microsecond nearest to `date`: the stored value, for a `Date` read from a row. Measured from PostgreSQL's
    /// epoch, as PostgresNIO read it, so the floating-point error stays under half a microsecond for any date to 2100.
    public init(_ date: Date) {
        microsecondsSince1970 = Int64((date.timeIntervalSince(Self.postgresEpoch) * 1_000_000).rounded()) + Self.postgresEpochMicroseconds
    }

    public static var psqlType: PostgresDataType { .timestamptz }
    public static var psqlFormat: PostgresFormat { .binary }

    public func encode<JSONEncoder: PostgresJSONEncoder>(into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        buffer.writeInteger(microsecondsSince1970 - Self.postgresEpochMicroseconds)
    }
}
