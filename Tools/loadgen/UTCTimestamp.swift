import Foundation

/// Reads the sandbox's `receivedAt` (`2026-11-22T17:30:15.123Z`, as its ISO8601Timestamp writes it) without a date
/// formatter: `YYYY-MM-DDTHH:MM:SS`, an optional fraction of 1 to 9 digits, and `Z`, to the `Date`
/// `Date.ISO8601FormatStyle` reads from it (whole days since 2001 in seconds, plus the time of day).
enum UTCTimestamp {
    /// nil for any other form, or a date or time that does not exist.
    static func parse(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { parse(bytes: $0) }
    }

    private static func parse(bytes text: UnsafeBufferPointer<UInt8>) -> Date? {
        guard text.count >= 20, text.count <= 30, text.count != 21, text[text.count - 1] == UInt8(ascii: "Z"),
            text[4] == UInt8(ascii: "-"), text[7] == UInt8(ascii: "-"), text[10] == UInt8(ascii: "T"),
            text[13] == UInt8(ascii: ":"), text[16] == UInt8(ascii: ":"),
            let year = number(text, 0..<4), let month = number(text, 5..<7), let day = number(text, 8..<10),
            let hour = number(text, 11..<13), let minute = number(text, 14..<16), let second = number(text, 17..<19),
            (1...12).contains(month), day >= 1, day <= daysInMonth(month, year: year), hour < 24, minute < 60, second < 60
        else { return nil }
        var nanoseconds = 0
        if text.count > 20 {
            guard text[19] == UInt8(ascii: "."), let fraction = number(text, 20..<text.count - 1) else { return nil }
            nanoseconds = fraction
            for _ in (text.count - 21)..<9 { nanoseconds *= 10 }
        }
        let daysSince2001 = daysSince1970(year: year, month: month, day: day) - 11_323
        let secondOfDay = hour * 3600 + minute * 60 + second
        return Date(timeIntervalSinceReferenceDate: Double(daysSince2001) * 86_400 + (Double(secondOfDay) + Double(nanoseconds) / 1e9))
    }

    private static func number(_ text: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int? {
        var value = 0
        for index in range {
            let digit = text[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            value = value * 10 + Int(digit)
        }
        return value
    }

    private static func daysInMonth(_ month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (Howard Hinnant's `days_from_civil`).
    private static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
