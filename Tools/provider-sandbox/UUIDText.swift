import Synchronization

/// UUIDs as lower-case 8-4-4-4-12 text, checked and made byte by byte: Foundation's `UUID()` costs
/// a `getrandom` call and `uuidString` an `snprintf`, which add up when done for every push.
enum UUIDText {
    /// Bytes 0–7 of every UUID this process makes: random, with the version 4 nibble.
    private static let processPrefix = (UInt64.random(in: .min ... .max) & ~0xF000) | 0x4000
    /// Bytes 8–15 of the next UUID before its variant bits are set; starts random so that UUIDs
    /// differ across restarts too.
    private static let counter = Atomic(UInt64.random(in: .min ... .max))

    /// Whether `value` is a UUID in its canonical form: hexadecimal digits (either case) in groups
    /// of 8, 4, 4, 4 and 12, separated by dashes.
    static func isCanonical(_ value: String) -> Bool {
        var value = value
        return value.withUTF8 { bytes in
            guard bytes.count == 36 else { return false }
            for (offset, byte) in bytes.enumerated() {
                let isValid = switch offset {
                case 8, 13, 18, 23: byte == UInt8(ascii: "-")
                default: byte.isASCIIHexDigit
                }
                guard isValid else { return false }
            }
            return true
        }
    }

    /// A version 4, variant 1 UUID that no other call in this process answers: the process prefix
    /// and a counter. Unique but not unpredictable, which is all the ids the sandbox hands out need.
    static func next() -> String {
        let sequence = counter.wrappingAdd(1, ordering: .relaxed).newValue
        let words = (processPrefix, (sequence & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000)
        return String(unsafeUninitializedCapacity: 36) { text in
            var position = 0
            for nibble in 0..<32 {
                if nibble == 8 || nibble == 12 || nibble == 16 || nibble == 20 {
                    text[position] = UInt8(ascii: "-")
                    position += 1
                }
                let word = nibble < 16 ? words.0 : words.1
                let digit = UInt8(truncatingIfNeeded: word >> UInt64(60 - 4 * (nibble % 16))) & 0xF
                text[position] = digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") - 10 + digit
                position += 1
            }
            return position
        }
    }
}
