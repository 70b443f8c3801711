import Foundation

/// Hexadecimal digits, for text written byte by byte.
enum HexDigits {
    static let lowercase: [UInt8] = Array("0123456789abcdef".utf8)
}

extension UInt8 {
    /// The value of this byte as an ASCII hexadecimal digit (0-9, a-f, A-F); nil for any other byte.
    public var hexDigitValue: UInt8? {
        switch self {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): self - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): self - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): self - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension UUID {
    /// Appends the 8-4-4-4-12 string form (`uuidString`, or its lowercase) without formatting a String
    /// (every push job has five: two in its push id, three in its JSON).
    func appendString(to bytes: inout [UInt8], uppercase: Bool) {
        withString(uppercase: uppercase) { bytes.append(contentsOf: $0) }
    }

    /// Calls `body` with the 36 characters of the 8-4-4-4-12 string form, written on the stack.
    func withString<Result>(uppercase: Bool, _ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        // A nibble of 10 or more is a letter: 'a' or 'A' less 10, which is '0' plus this.
        let letterShift: UInt8 = uppercase ? 7 : 39
        var text: (UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0)  // 40 bytes: room for 36
        return try withUnsafeMutableBytes(of: &text) { characters in
            withUnsafeBytes(of: uuid) { raw in
                for index in 0..<16 {
                    let byte = raw[index]
                    let high = byte >> 4
                    let low = byte & 0xF
                    // Bytes 4, 6, 8 and 10 each start a group after a dash.
                    let dashes = (index >= 4 ? 1 : 0) + (index >= 6 ? 1 : 0) + (index >= 8 ? 1 : 0) + (index >= 10 ? 1 : 0)
                    let position = 2 * index + dashes
                    characters[position] = high &+ 48 &+ (high > 9 ? letterShift : 0)
                    characters[position + 1] = low &+ 48 &+ (low > 9 ? letterShift : 0)
                }
            }
            characters[8] = UInt8(ascii: "-")
            characters[13] = UInt8(ascii: "-")
            characters[18] = UInt8(ascii: "-")
            characters[23] = UInt8(ascii: "-")
            return try body(UnsafeRawBufferPointer(rebasing: characters[..<36]))
        }
    }

    /// `uuidString.lowercased()` (the form of every id on the wire and in provider headers), without `snprintf`.
    public var lowercasedString: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(36)
        appendString(to: &bytes, uppercase: false)
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension Int64 {
    /// Appends the decimal digits (what `String(self)` gives) without making a String.
    func appendDecimal(to bytes: inout [UInt8]) {
        if self < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = self.magnitude
        var reversed: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for UInt64's 20 digits
        var count = 0
        withUnsafeMutableBytes(of: &reversed) { digits in
            repeat {
                digits[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            for index in stride(from: count - 1, through: 0, by: -1) { bytes.append(digits[index]) }
        }
    }

    /// Appends the value zero-padded to `width` digits (non-negative values).
    fileprivate func appendPadded(width: Int, to bytes: inout [UInt8]) {
        var divisor: Int64 = 1
        for _ in 1..<width { divisor *= 10 }
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(self / divisor % 10))
            divisor /= 10
        }
    }
}

extension Date {
    /// Appends the wire timestamp: UTC, ISO 8601 with milliseconds, `2026-01-31T12:00:00.000Z`; the fraction
    /// is truncated to milliseconds, as Foundation's ISO 8601 format style does, after rounding to microseconds:
    /// a parsed `.123` is often stored just below 0.123 s, and must be written as `.123` again, not `.122`.
    func appendWireTimestamp(to bytes: inout [UInt8]) {
        let seconds = timeIntervalSince1970.rounded(.down)
        let microseconds = Int64(((timeIntervalSince1970 - seconds) * 1_000_000).rounded())
        let milliseconds = Int64(seconds) * 1000 + microseconds / 1000
        let (days, millisecondOfDay) = milliseconds.quotientAndRemainder(dividingBy: 86_400_000)
        let (day, dayMilliseconds) = millisecondOfDay < 0 ? (days - 1, millisecondOfDay + 86_400_000) : (days, millisecondOfDay)
        let (year, month, dayOfMonth) = Self.civilDate(daysSince1970: day)
        year.appendPadded(width: 4, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        month.appendPadded(width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        dayOfMonth.appendPadded(width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "T"))
        (dayMilliseconds / 3_600_000).appendPadded(width: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        (dayMilliseconds / 60_000 % 60).appendPadded(width: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        (dayMilliseconds / 1000 % 60).appendPadded(width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "."))
        (dayMilliseconds % 1000).appendPadded(width: 3, to: &bytes)
        bytes.append(UInt8(ascii: "Z"))
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

extension Sequence<UInt8> {
    /// Two lowercase hexadecimal digits a byte (what `String(format: "%02x")` gives for each), without formatting.
    public var lowercaseHex: String {
        var text: [UInt8] = []
        text.reserveCapacity(underestimatedCount * 2)
        for byte in self {
            text.append(HexDigits.lowercase[Int(byte >> 4)])
            text.append(HexDigits.lowercase[Int(byte & 0xF)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
