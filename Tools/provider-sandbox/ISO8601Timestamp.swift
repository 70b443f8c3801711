import Foundation

/// UTC timestamps as `Date.ISO8601FormatStyle(includingFractionalSeconds: true)` writes them
/// (`2025-01-31T12:34:56.789Z`), for years 0 to 9999, written straight into bytes: `Date.formatted`
/// costs about a microsecond, paid for every record.
enum ISO8601Timestamp {
    private static let millisecondsPerDay: Int64 = 86_400_000

    /// Appends `date`, its fraction of a second cut to milliseconds as Foundation does (through
    /// whole nanoseconds).
    static func append(_ date: Date, to output: inout [UInt8]) {
        let interval = date.timeIntervalSince1970
        let seconds = interval.rounded(.down)
        let milliseconds = Int64(seconds) * 1000 + Int64((interval - seconds) * 1e9) / 1_000_000
        var days = milliseconds / millisecondsPerDay
        var millisecondOfDay = milliseconds % millisecondsPerDay
        if millisecondOfDay < 0 {
            days -= 1
            millisecondOfDay += millisecondsPerDay
        }
        let (year, month, day) = civilDate(daysSince1970: days)
        appendDigits(year, count: 4, to: &output)
        output.append(UInt8(ascii: "-"))
        appendDigits(month, count: 2, to: &output)
        output.append(UInt8(ascii: "-"))
        appendDigits(day, count: 2, to: &output)
        output.append(UInt8(ascii: "T"))
        appendDigits(millisecondOfDay / 3_600_000, count: 2, to: &output)
        output.append(UInt8(ascii: ":"))
        appendDigits(millisecondOfDay / 60_000 % 60, count: 2, to: &output)
        output.append(UInt8(ascii: ":"))
        appendDigits(millisecondOfDay / 1000 % 60, count: 2, to: &output)
        output.append(UInt8(ascii: "."))
        appendDigits(millisecondOfDay % 1000, count: 3, to: &output)
        output.append(UInt8(ascii: "Z"))
    }

    /// The proleptic Gregorian date of a day counted from 1970-01-01 (Howard Hinnant's
    /// `civil_from_days`, with 400-year eras starting on March 1st).
    private static func civilDate(daysSince1970: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let daysSinceEpochMarch = daysSince1970 + 719_468  // days since 0000-03-01
        let era = (daysSinceEpochMarch >= 0 ? daysSinceEpochMarch : daysSinceEpochMarch - 146_096) / 146_097
        let dayOfEra = daysSinceEpochMarch - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153  // 0 is March
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Appends the last `count` decimal digits of `value` (not negative), zero-padded.
    private static func appendDigits(_ value: Int64, count: Int, to output: inout [UInt8]) {
        var divisor: Int64 = 1
        for _ in 1..<count {
            divisor *= 10
        }
        while divisor > 0 {
            output.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
            divisor /= 10
        }
    }
}
