import Foundation

/// The wire timestamp of every date in the API (`2026-01-31T12:00:00.000Z`: UTC, ISO 8601, milliseconds), written and
/// read byte by byte: every date of every answer and of every publish goes through here, and Foundation's ISO 8601
/// style was several microseconds a date.
public enum WireTimestamp {
    /// Appends the wire timestamp: UTC, ISO 8601 with milliseconds, `2026-01-31T12:00:00.000Z`; the fraction
    /// is truncated to milliseconds, as Foundation's ISO 8601 format style does, after rounding to microseconds:
    /// a parsed `.123` is often stored just below 0.123 s, and must be written as `.123` again, not `.122`.
    @inlinable public static func append(_ date: Date, to bytes: inout [UInt8]) {
        let timeIntervalSince1970 = date.timeIntervalSince1970
        let seconds = timeIntervalSince1970.rounded(.down)
        let microseconds = Int64(((timeIntervalSince1970 - seconds) * 1_000_000).rounded())
        let milliseconds = Int64(seconds) * 1000 + microseconds / 1000
        let (days, millisecondOfDay) = milliseconds.quotientAndRemainder(dividingBy: 86_400_000)
        let (day, dayMilliseconds) = millisecondOfDay < 0 ? (days - 1, millisecondOfDay + 86_400_000) : (days, millisecondOfDay)
        let (year, month, dayOfMonth) = civilDate(daysSince1970: day)
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
    @inlinable static func civilDate(daysSince1970 days: Int64) -> (Int64, Int64, Int64) {
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

    /// `YYYY-MM-DDTHH:MM:SS[.fraction]Z` for a real date and time from 1600 on (Foundation's calendar is
    /// Julian before 1582), to the `Date` Foundation's ISO 8601 parser gives: whole days of seconds since
    /// 2001, plus the time of day with the fraction, added in that order. Nil for any other form.
    public static func parse(_ text: UnsafeRawBufferPointer) -> Date? {
        guard text.count >= 20, text.count <= 30, text.count != 21, text[text.count - 1] == UInt8(ascii: "Z") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                let digit = text[index] &- UInt8(ascii: "0")
                guard digit < 10 else { return nil }
                value = value * 10 + Int(digit)
            }
            return value
        }
        guard text[4] == UInt8(ascii: "-"), text[7] == UInt8(ascii: "-"), text[10] == UInt8(ascii: "T"),
            text[13] == UInt8(ascii: ":"), text[16] == UInt8(ascii: ":"),
            let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            year >= 1600, (1...12).contains(month), day >= 1, day <= daysInMonth(month, year: year),
            hour < 24, minute < 60, second < 60
        else { return nil }
        var nanoseconds = 0
        if text.count > 20 {
            guard text[19] == UInt8(ascii: "."), let fraction = number(20..<text.count - 1) else { return nil }
            nanoseconds = fraction
            for _ in (text.count - 21)..<9 { nanoseconds *= 10 }
        }
        let daysSinceReferenceDate = daysSince1970(year: year, month: month, day: day) - 11_323
        let secondOfDay = hour * 3600 + minute * 60 + second
        return Date(timeIntervalSinceReferenceDate: Double(daysSinceReferenceDate) * 86_400 + (Double(secondOfDay) + Double(nanoseconds) / 1e9))
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
        let era = shiftedYear / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

extension Int64 {
    /// Appends the value zero-padded to `width` digits (non-negative values).
    @inlinable func appendPadded(width: Int, to bytes: inout [UInt8]) {
        var divisor: Int64 = 1
        for _ in 1..<width { divisor *= 10 }
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(self / divisor % 10))
            divisor /= 10
        }
    }
}
