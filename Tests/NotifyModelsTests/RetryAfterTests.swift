import Foundation
import NotifyModels
import Testing

/// `Retry-After` in both its forms (RFC 9110 §10.2.3), as every provider's answer is read.
@Suite struct RetryAfterTests {
    private static let now = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT

    @Test("delay-seconds, and an HTTP-date in each of its three forms, counted from now")
    func bothForms() {
        #expect(RetryAfter.seconds("120", now: Self.now) == 120)
        #expect(RetryAfter.seconds(" 7 ", now: Self.now) == 7)
        #expect(RetryAfter.seconds("Sun, 06 Nov 1994 08:50:07 GMT", now: Self.now) == 30)
        #expect(RetryAfter.seconds("Sunday, 06-Nov-94 08:50:07 GMT", now: Self.now) == 30)
        #expect(RetryAfter.seconds("Sun Nov  6 08:50:07 1994", now: Self.now) == 30)
    }

    @Test("a date already passed is no wait; anything else is nothing")
    func pastAndInvalid() {
        #expect(RetryAfter.seconds("Sun, 06 Nov 1994 08:00:00 GMT", now: Self.now) == 0)
        #expect(RetryAfter.seconds("-5", now: Self.now) == 0)
        #expect(RetryAfter.seconds("soon", now: Self.now) == nil)
        #expect(RetryAfter.seconds("", now: Self.now) == nil)
    }
}
