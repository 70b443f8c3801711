import Foundation

/// The `Retry-After` header a provider answers (RFC 9110 §10.2.3): delay-seconds, or an HTTP-date.
public enum RetryAfter {
    /// The whole seconds to wait that `value` says, counted from `now` for a date (rounded up; a date passed is 0);
    /// nil when `value` is neither form.
    public static func seconds(_ value: String, now: Date = Date()) -> Int? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Int(text) { return max(seconds, 0) }
        guard let date = httpDate(text) else { return nil }
        return max(Int(date.timeIntervalSince(now).rounded(.up)), 0)
    }

    /// IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT") and the two obsolete forms RFC 9110 says to accept: RFC 850
    /// ("Sunday, 06-Nov-94 08:49:37 GMT") and asctime ("Sun Nov  6 08:49:37 1994").
    static func httpDate(_ text: String) -> Date? {
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            if let date = formatter.date(from: text.replacingOccurrences(of: "  ", with: " ")) { return date }
        }
        return nil
    }
}
