/// Tests eight bytes of a JSON string at once, for the reader and the writer: most strings on the hot path (ids,
/// tokens, payload text) are long runs of plain ASCII, which are then passed over a word at a time instead of a byte
/// at a time. Bit tricks from "Bit Twiddling Hacks" (hasless, haszero): exact for whether any byte matches.
@usableFromInline enum JSONStringWords {
    @usableFromInline static let ones: UInt64 = 0x0101_0101_0101_0101
    @usableFromInline static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// Whether `word` holds a byte that ends a run of a string's plain characters: a quote, a backslash, or a
    /// control character (below 0x20). Bytes of 0x80 and above do not count.
    @inlinable @inline(__always)
    static func hasQuoteBackslashOrControl(_ word: UInt64) -> Bool {
        let control = (word &- ones &* 0x20) & ~word
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        let quoteOrBackslash = ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash)
        return (control | quoteOrBackslash) & highBits != 0
    }

    /// Whether `word` holds a byte of 0x80 or above (not ASCII).
    @inlinable @inline(__always)
    static func hasNonASCII(_ word: UInt64) -> Bool {
        word & highBits != 0
    }

    /// The eight bytes at `offset` of `bytes`, at any alignment (the tests above do not depend on byte order).
    @inlinable @inline(__always)
    static func word(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt64 {
        bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
    }
}
