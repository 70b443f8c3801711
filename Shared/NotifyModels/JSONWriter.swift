import Foundation

/// Appends compact JSON to a byte buffer without going through `Codable`;
/// used on the per-push hot path where JSONEncoder's allocations dominate.
public struct JSONWriter: Sendable {
    public private(set) var bytes: [UInt8]
    private var needsComma: [Bool] = []

    public init(capacity: Int = 512) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    public mutating func beginObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        needsComma.append(false)
    }

    public mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        needsComma.removeLast()
    }

    public mutating func beginArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
        needsComma.append(false)
    }

    public mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        needsComma.removeLast()
    }

    /// Writes an object key; the next value written belongs to it.
    public mutating func key(_ name: String) {
        separate()
        appendString(name)
        bytes.append(UInt8(ascii: ":"))
        if !needsComma.isEmpty { needsComma[needsComma.count - 1] = false }
    }

    public mutating func string(_ value: String) {
        separate()
        appendString(value)
    }

    public mutating func integer(_ value: Int64) {
        separate()
        value.appendDecimal(to: &bytes)
    }

    /// A UUID as its lowercase 8-4-4-4-12 string (what `uuidString.lowercased()` gives, without the formatting).
    public mutating func uuid(_ value: UUID) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        value.appendString(to: &bytes, uppercase: false)
        bytes.append(UInt8(ascii: "\""))
    }

    /// A timestamp in the wire format (`WireCoding`): UTC, ISO 8601 with milliseconds, `2026-01-31T12:00:00.000Z`.
    public mutating func timestamp(_ date: Date) {
        separate()
        // Whole seconds, then the fraction truncated to milliseconds: as Foundation's ISO 8601 style does.
        let seconds = date.timeIntervalSince1970.rounded(.down)
        let milliseconds = Int64(seconds) * 1000 + Int64(((date.timeIntervalSince1970 - seconds) * 1000).rounded(.down))
        let (days, millisecondOfDay) = milliseconds.quotientAndRemainder(dividingBy: 86_400_000)
        let (day, dayMilliseconds) = millisecondOfDay < 0 ? (days - 1, millisecondOfDay + 86_400_000) : (days, millisecondOfDay)
        let (year, month, dayOfMonth) = Self.civilDate(daysSince1970: day)
        bytes.append(UInt8(ascii: "\""))
        appendPadded(year, width: 4)
        bytes.append(UInt8(ascii: "-"))
        appendPadded(month, width: 2)
        bytes.append(UInt8(ascii: "-"))
        appendPadded(dayOfMonth, width: 2)
        bytes.append(UInt8(ascii: "T"))
        appendPadded(dayMilliseconds / 3_600_000, width: 2)
        bytes.append(UInt8(ascii: ":"))
        appendPadded(dayMilliseconds / 60_000 % 60, width: 2)
        bytes.append(UInt8(ascii: ":"))
        appendPadded(dayMilliseconds / 1000 % 60, width: 2)
        bytes.append(UInt8(ascii: "."))
        appendPadded(dayMilliseconds % 1000, width: 3)
        bytes.append(UInt8(ascii: "Z"))
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends `json`, a complete JSON value written before (e.g. a string escaped once for many messages).
    public mutating func rawValue(_ json: [UInt8]) {
        separate()
        bytes.append(contentsOf: json)
    }

    public mutating func bool(_ value: Bool) {
        separate()
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    public mutating func null() {
        separate()
        bytes.append(contentsOf: "null".utf8)
    }

    public mutating func value(_ value: JSONValue) {
        switch value {
        case .null: null()
        case .bool(let flag): bool(flag)
        case .number(let number):
            if number.rounded() == number, abs(number) < 1e15 {
                integer(Int64(number))
            } else {
                separate()
                bytes.append(contentsOf: "\(number)".utf8)
            }
        case .string(let text): string(text)
        case .array(let items):
            beginArray()
            for item in items { self.value(item) }
            endArray()
        case .object(let members):
            beginObject()
            for (name, member) in members.sorted(by: { $0.key < $1.key }) {
                key(name)
                self.value(member)
            }
            endObject()
        }
    }

    private mutating func separate() {
        guard let last = needsComma.last else { return }
        if last {
            bytes.append(UInt8(ascii: ","))
        } else {
            needsComma[needsComma.count - 1] = true
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    private mutating func appendString(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                bytes.append(0x5C)
                bytes.append(byte)
            case 0x0A:
                bytes.append(0x5C)
                bytes.append(UInt8(ascii: "n"))
            case 0x0D:
                bytes.append(0x5C)
                bytes.append(UInt8(ascii: "r"))
            case 0x09:
                bytes.append(0x5C)
                bytes.append(UInt8(ascii: "t"))
            case 0..<0x20:
                for escaped in [0x5C, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")] as [UInt8] { bytes.append(escaped) }
                bytes.append(Self.hexDigits[Int(byte >> 4)])
                bytes.append(Self.hexDigits[Int(byte & 0xF)])
            default:
                bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func appendPadded(_ value: Int64, width: Int) {
        var divisor: Int64 = 1
        for _ in 1..<width { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor % 10))
            rest %= divisor
            divisor /= 10
        }
    }

    /// Year, month and day of a day counted from 1970-01-01 (Howard Hinnant's `civil_from_days`).
    private static func civilDate(daysSince1970 days: Int64) -> (Int64, Int64, Int64) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
