import Foundation
import NIOCore
import NotifyDatabase
import PostgresNIO
import Testing

/// `ArrayParameter` writes, byte for byte, what PostgresNIO writes for the same array, so PostgreSQL reads the
/// same values from it.
@Suite("Array parameters")
struct ArrayParameterTests {
    @Test("uuid[]: empty, one, many")
    func uuids() throws {
        for count in [0, 1, 7, 1000] {
            try expectSameBytes((0..<count).map { _ in UUID() })
        }
    }

    @Test("text[]: empty strings, ASCII, multi-byte UTF-8, long, and strings that are not native")
    func strings() throws {
        try expectSameBytes([String]())
        try expectSameBytes(["", "a", "delivered", "Zürich ✓ 🎉", String(repeating: "x", count: 10_000), ""])
        try expectSameBytes([NSString(string: "bridged ✓") as String, String(Substring("sub-string ✓"))])
    }

    @Test("int8[] and int4[]: negative, zero and extreme values")
    func integers() throws {
        try expectSameBytes([Int64.min, -1, 0, 1, Int64.max])
        try expectSameBytes([Int32.min, -1, 0, 410, Int32.max])
        try expectSameBytes([Int64]())
    }

    @Test("bool[]")
    func booleans() throws {
        try expectSameBytes([true, false, false, true])
    }

    @Test("timestamptz[]: before and after 2000-01-01, with fractions of a microsecond")
    func dates() throws {
        try expectSameBytes([
            Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 946_684_800), Date(timeIntervalSince1970: 946_684_799.999_999_5),
            Date(timeIntervalSince1970: 1_795_000_000.123_456_7), Date(), Date.distantPast, Date.distantFuture,
        ])
    }

    @Test("the parameter has the array's type and binary format")
    func type() {
        #expect(ArrayParameter<UUID>.psqlType == .uuidArray)
        #expect(ArrayParameter<String>.psqlType == .textArray)
        #expect(ArrayParameter<Int64>.psqlType == .int8Array)
        #expect(ArrayParameter<Int32>.psqlType == .int4Array)
        #expect(ArrayParameter<Date>.psqlType == .timestamptzArray)
        #expect(ArrayParameter<Bool>.psqlType == .boolArray)
        #expect(ArrayParameter<UUID>.psqlFormat == .binary)
    }

    private func expectSameBytes<Element: ArrayParameterElement & Sendable>(_ elements: [Element], sourceLocation: SourceLocation = #_sourceLocation) throws {
        var expected = ByteBuffer()
        try elements.encode(into: &expected, context: .default)
        // Written after what the buffer holds already, as PostgresNIO's bindings do (a length first), and leaving
        // room for what follows; room that is not reserved up front makes the buffer grow mid-write.
        var written = ByteBuffer(integer: UInt32(0xABCD_EF01))
        ArrayParameter(elements).encode(into: &written, context: .default)
        #expect(written.readInteger(as: UInt32.self) == 0xABCD_EF01, sourceLocation: sourceLocation)
        #expect(written == expected, "\(Element.self) × \(elements.count)", sourceLocation: sourceLocation)
    }
}
