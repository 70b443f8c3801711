import Foundation
import NotifyAPI

/// Reads JSON from bytes one value at a time, without a document tree or `Codable`: the reading side of
/// `JSONWriter`, for the messages every change and push goes through, where JSONDecoder was most of the CPU.
///
/// It accepts what Foundation's `JSONDecoder` accepts, quirks included: a trailing comma in an object or
/// array, a leading byte-order mark, nesting up to 512 levels. Values that are decoded are checked strictly
/// (escapes, surrogate pairs, UTF-8, number syntax and range); values that are skipped (unknown keys) are
/// checked only for their structure, as JSONDecoder checks them. A decoder reads an object with
/// `readObject`, switching on each key; on a repeated key the first one counts, as with JSONDecoder.
/// Every error it throws is a `JSONReadError`.
public struct JSONReader {
    private let bytes: UnsafeRawBufferPointer
    /// Where the next byte is read, from the start of the document.
    public private(set) var offset: Int
    private var depth = 0

    /// JSONDecoder refuses deeper documents; the limit also keeps recursion off the end of the stack.
    static let maximumDepth = 512

    private init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        let hasByteOrderMark = bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF
        offset = hasByteOrderMark ? 3 : 0
    }

    /// Reads `document` as one JSON value: `body` reads the value, after which only whitespace may follow.
    public static func read<Value>(
        _ document: some ContiguousBytes, _ body: (inout JSONReader) throws -> Value
    ) throws -> Value {
        try document.withUnsafeBytes { bytes in
            var reader = JSONReader(bytes: bytes)
            let value = try body(&reader)
            reader.skipWhitespace()
            if reader.offset < bytes.count { throw reader.error("unexpected bytes after the JSON value") }
            return value
        }
    }

    // MARK: Containers

    /// Reads an object, calling `body` once per member with the reader at the member's value; `body` must
    /// read or skip that value. Errors thrown inside name the key.
    public mutating func readObject(_ body: (inout JSONReader, JSONKey) throws -> Void) throws {
        try open(UInt8(ascii: "{"), "an object")
        if try closes(UInt8(ascii: "}")) { return }
        repeat {
            skipWhitespace()
            guard peek() == UInt8(ascii: "\"") else { throw error("expected a key in quotes") }
            let key = try scanString()
            try expectSeparator(UInt8(ascii: ":"))
            let raw = UnsafeRawBufferPointer(rebasing: bytes[key.start..<key.end])
            // Rare: a key with escapes is compared as JSONDecoder compares it, unescaped.
            let unescaped = key.hasEscapes ? try unescapedString(key) : nil
            if !key.isASCII && !key.hasEscapes { _ = try plainString(key) }  // JSONDecoder refuses a key that is not UTF-8
            do {
                if let unescaped {
                    let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: unescaped.utf8.count, alignment: 1)
                    defer { copy.deallocate() }
                    copy.copyBytes(from: unescaped.utf8)
                    try body(&self, JSONKey(bytes: UnsafeRawBufferPointer(copy)))
                } else {
                    try body(&self, JSONKey(bytes: raw))
                }
            } catch let error as JSONReadError {
                throw error.inside(unescaped ?? JSONKey(bytes: raw).description)
            }
        } while try continues(closingWith: UInt8(ascii: "}"))
    }

    /// Reads an array, calling `body` with the reader at each element; `body` must read or skip it.
    public mutating func readElements(_ body: (inout JSONReader) throws -> Void) throws {
        try open(UInt8(ascii: "["), "an array")
        if try closes(UInt8(ascii: "]")) { return }
        var index = 0
        repeat {
            do {
                try body(&self)
            } catch let error as JSONReadError {
                throw error.inside("[\(index)]")
            }
            index += 1
        } while try continues(closingWith: UInt8(ascii: "]"))
    }

    /// Reads an array whose elements `element` reads.
    public mutating func readArray<Element>(of element: (inout JSONReader) throws -> Element) throws -> [Element] {
        var elements: [Element] = []
        try readElements { reader in elements.append(try element(&reader)) }
        return elements
    }

    /// Reads `null` as nil, anything else with `value`: an optional field that is absent or null is nil.
    public mutating func readOptional<Value>(_ value: (inout JSONReader) throws -> Value) throws -> Value? {
        try readNull() ? nil : try value(&self)
    }

    /// Consumes `null` if it comes next.
    public mutating func readNull() throws -> Bool {
        skipWhitespace()
        guard peek() == UInt8(ascii: "n") else { return false }
        try expectLiteral("null")
        return true
    }

    // MARK: Scalars

    public mutating func readString() throws -> String {
        try expectValue(UInt8(ascii: "\""), "a string")
        let span = try scanString()
        if span.hasEscapes { return try unescapedString(span) }
        return try plainString(span)
    }

    /// A string that must be one of `Value`'s raw values.
    /// One of the enumeration's values; an error lists the values accepted, in the API's words.
    public mutating func readEnum<Value: RawRepresentable & CaseIterable>(_ type: Value.Type) throws -> Value where Value.RawValue == String {
        let start = offset
        let text = try readString()
        guard let value = Value(rawValue: text) else {
            throw JSONReadError("\"\(text)\" is not one of \(Value.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", "))", offset: start)
        }
        return value
    }

    public mutating func readBool() throws -> Bool {
        skipWhitespace()
        switch peek() {
        case UInt8(ascii: "t"): try expectLiteral("true"); return true
        case UInt8(ascii: "f"): try expectLiteral("false"); return false
        default: throw error("expected true or false")
        }
    }

    /// An integer as JSONDecoder reads one: `7`, and also `7.0`, `7e0` or `1e-400` (zero), read through a Double,
    /// but not `7.5` or an out-of-range value. One difference: JSONDecoder reads a number of 2^53 or more with a
    /// fraction or exponent through Decimal, dropping any fraction (and can trap); the reader refuses it.
    public mutating func readInt64() throws -> Int64 {
        let number = try scanNumber()
        if number.isInteger {
            if let value = integerValue(number) { return value }
        } else if let value = Int64(exactly: parsedDouble(number)), value.magnitude < 1 << 53 {
            return value
        }
        throw JSONReadError("the number does not fit an integer", offset: number.start)
    }

    public mutating func readInt() throws -> Int {
        let start = offset
        guard let value = Int(exactly: try readInt64()) else { throw JSONReadError("the number does not fit an integer", offset: start) }
        return value
    }

    /// A finite number (JSONDecoder refuses ones that overflow, or underflow to zero).
    public mutating func readDouble() throws -> Double {
        try doubleValue(try scanNumber())
    }

    /// A UUID in its 8-4-4-4-12 string form, either case (what `UUID(uuidString:)` accepts).
    public mutating func readUUID() throws -> UUID {
        try expectValue(UInt8(ascii: "\""), "a UUID string")
        let span = try scanString()
        if !span.hasEscapes, let uuid = Self.uuid(UnsafeRawBufferPointer(rebasing: bytes[span.start..<span.end])) { return uuid }
        // Anything else is left to Foundation, which is lenient in ways not worth copying (`53336+7-...` reads).
        let text = span.hasEscapes ? try unescapedString(span) : try plainString(span)
        if let uuid = UUID(uuidString: text) { return uuid }
        throw JSONReadError("expected a UUID such as 0e0b5f3c-9a57-4a8e-8f8b-2b9a0c5d6e7f", offset: span.start)
    }

    /// A timestamp as `WireCoding.makeDecoder` reads it. The wire form (`2026-01-31T12:00:00.000Z`, UTC, up to
    /// nine fraction digits) is read here, to the same `Date`; any other form goes to `WireCoding.parseTimestamp`.
    public mutating func readTimestamp() throws -> Date {
        try expectValue(UInt8(ascii: "\""), "a timestamp string")
        let span = try scanString()
        if !span.hasEscapes, let date = WireTimestamp.parse(UnsafeRawBufferPointer(rebasing: bytes[span.start..<span.end])) { return date }
        let text = span.hasEscapes ? try unescapedString(span) : try plainString(span)
        guard let date = WireCoding.parseTimestamp(text) else {
            throw JSONReadError("expected an ISO-8601 timestamp such as 2026-01-31T12:00:00Z", offset: span.start)
        }
        return date
    }

    /// Any value, as `JSONValue` decodes it.
    public mutating func readValue() throws -> JSONValue {
        skipWhitespace()
        switch peek() {
        case UInt8(ascii: "{"): return .object(try readObjectValue())
        case UInt8(ascii: "["):
            return .array(try readArray { reader in try reader.readValue() })
        case UInt8(ascii: "\""): return .string(try readString())
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return .bool(try readBool())
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        default: return .number(try readDouble())
        }
    }

    /// An object of any values, as `[String: JSONValue]` decodes it (the first of a repeated key counts).
    public mutating func readObjectValue() throws -> [String: JSONValue] {
        var members: [String: JSONValue] = [:]
        try readObject { reader, key in
            let name = key.description
            if members[name] == nil { members[name] = try reader.readValue() } else { try reader.skipValue() }
        }
        return members
    }

    /// Skips a value of an unknown key, checking what JSONDecoder checks of it: its structure and literals
    /// (not escapes, UTF-8, or number syntax).
    public mutating func skipValue() throws {
        skipWhitespace()
        switch peek() ?? 0 {
        case UInt8(ascii: "{"):
            try open(UInt8(ascii: "{"), "an object")
            if try closes(UInt8(ascii: "}")) { return }
            repeat {
                skipWhitespace()
                guard peek() == UInt8(ascii: "\"") else { throw error("expected a key in quotes") }
                try skipString()
                try expectSeparator(UInt8(ascii: ":"))
                try skipValue()
            } while try continues(closingWith: UInt8(ascii: "}"))
        case UInt8(ascii: "["):
            try open(UInt8(ascii: "["), "an array")
            if try closes(UInt8(ascii: "]")) { return }
            repeat { try skipValue() } while try continues(closingWith: UInt8(ascii: "]"))
        case UInt8(ascii: "\""): try skipString()
        case UInt8(ascii: "t"): try expectLiteral("true")
        case UInt8(ascii: "f"): try expectLiteral("false")
        case UInt8(ascii: "n"): try expectLiteral("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            offset += 1
            while let byte = peek(), Self.isNumberByte(byte) { offset += 1 }
        default: throw error("expected a value")
        }
    }

    /// Skips the next value (checked as `skipValue` checks it) and hands its bytes, uncopied, to `body`: for a part
    /// that another decoder reads.
    public mutating func readRawValue<Value>(_ body: (UnsafeRawBufferPointer) throws -> Value) throws -> Value {
        skipWhitespace()
        let start = offset
        try skipValue()
        return try body(UnsafeRawBufferPointer(rebasing: bytes[start..<offset]))
    }

    /// The value of a required key, or an error naming the key.
    public func required<Value>(_ value: Value?, _ key: StaticString) throws -> Value {
        guard let value else { throw JSONReadError("the required key \"\(key)\" is missing", offset: offset) }
        return value
    }

    // MARK: Structure

    private mutating func open(_ bracket: UInt8, _ what: StaticString) throws {
        try expectValue(bracket, what)
        offset += 1
        depth += 1
        if depth > Self.maximumDepth { throw error("nested more than \(Self.maximumDepth) levels deep") }
    }

    /// After an opening bracket: consumes the closing one of an empty container.
    private mutating func closes(_ bracket: UInt8) throws -> Bool {
        skipWhitespace()
        guard peek() == bracket else { return false }
        offset += 1
        depth -= 1
        return true
    }

    /// After a member or element: true at a comma (another follows), false at the closing bracket, which it
    /// consumes. A comma right before the closing bracket is accepted, as JSONDecoder accepts it.
    private mutating func continues(closingWith bracket: UInt8) throws -> Bool {
        skipWhitespace()
        switch peek() {
        case UInt8(ascii: ","):
            offset += 1
            return try !closes(bracket)
        case bracket:
            offset += 1
            depth -= 1
            return false
        default:
            throw error(bracket == UInt8(ascii: "}") ? "expected , or } after an object member" : "expected , or ] after an array element")
        }
    }

    private mutating func expectSeparator(_ separator: UInt8) throws {
        skipWhitespace()
        guard peek() == separator else { throw error("expected \(Character(Unicode.Scalar(separator)))") }
        offset += 1
    }

    /// Skips whitespace and checks that a value starting with `first` comes next (without consuming it).
    private mutating func expectValue(_ first: UInt8, _ what: StaticString) throws {
        skipWhitespace()
        guard peek() == first else { throw error(peek() == UInt8(ascii: "n") ? "expected \(what), found null" : "expected \(what)") }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws {
        let matches = literal.withUTF8Buffer { text in
            offset + text.count <= bytes.count && zip(text, bytes[offset..<offset + text.count]).allSatisfy { $0 == $1 }
        }
        guard matches else { throw error("expected \(literal)") }
        offset += literal.utf8CodeUnitCount
    }

    private mutating func skipWhitespace() {
        while offset < bytes.count {
            switch bytes[offset] {
            case 0x20, 0x0A, 0x0D, 0x09: offset += 1
            default: return
            }
        }
    }

    private func peek() -> UInt8? {
        offset < bytes.count ? bytes[offset] : nil
    }

    private func error(_ message: String) -> JSONReadError {
        JSONReadError(offset < bytes.count ? message : "\(message), found the end of the input", offset: offset)
    }

    // MARK: Strings

    /// The bytes between a string's quotes.
    private struct StringSpan {
        var start: Int
        var end: Int
        var hasEscapes: Bool
        /// Bytes of 0x80 and above: the text must be checked to be UTF-8.
        var isASCII: Bool
    }

    /// From an opening quote to past the closing one; checks there are no raw control characters. Runs of plain
    /// characters are passed over eight bytes at a time; a word holding anything else (the closing quote, above all)
    /// is gone through byte by byte.
    private mutating func scanString() throws -> StringSpan {
        let start = offset + 1
        var index = start
        var hasEscapes = false
        var isASCII = true
        while index < bytes.count {
            if index + 8 <= bytes.count {
                let word = JSONStringWords.word(bytes, at: index)
                if !JSONStringWords.hasQuoteBackslashOrControl(word) {
                    if JSONStringWords.hasNonASCII(word) { isASCII = false }
                    index += 8
                    continue
                }
            }
            let wordEnd = min(index + 8, bytes.count)
            while index < wordEnd {
                let byte = bytes[index]
                // One test for the common case, printable ASCII other than a quote or backslash.
                if byte &- 0x20 < 0x60 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") {
                    index += 1
                    continue
                }
                switch byte {
                case UInt8(ascii: "\""):
                    offset = index + 1
                    return StringSpan(start: start, end: index, hasEscapes: hasEscapes, isASCII: isASCII)
                case UInt8(ascii: "\\"):
                    hasEscapes = true
                    index += 2
                case 0x80...:
                    isASCII = false
                    index += 1
                default:
                    offset = index
                    throw error("a control character must be escaped in a string")
                }
            }
        }
        offset = bytes.count
        throw error("unterminated string")
    }

    /// A string whose contents are not decoded. As in JSONDecoder, `\u` takes the next four bytes, whatever they are,
    /// except a quote: `"\u"0001"` is not a string that ends after `0001`, but an error.
    private mutating func skipString() throws {
        offset += 1
        while offset < bytes.count {
            switch bytes[offset] {
            case UInt8(ascii: "\""):
                offset += 1
                return
            case UInt8(ascii: "\\"):
                guard offset + 1 < bytes.count, bytes[offset + 1] == UInt8(ascii: "u") else {
                    offset += 2
                    continue
                }
                let digits = offset + 2..<min(offset + 6, bytes.count)
                if let quote = digits.first(where: { bytes[$0] == UInt8(ascii: "\"") }) {
                    offset = quote
                    throw error("a \\u escape cut short by the end of the string")
                }
                offset += 6
            default:
                offset += 1
            }
        }
        offset = bytes.count
        throw error("unterminated string")
    }

    /// A string without escapes: ASCII is taken as it is, anything else must be valid UTF-8.
    private func plainString(_ span: StringSpan) throws -> String {
        let text = UnsafeRawBufferPointer(rebasing: bytes[span.start..<span.end])
        if span.isASCII { return String(decoding: text, as: UTF8.self) }
        guard let valid = String(validating: text.bindMemory(to: UInt8.self), as: UTF8.self) else {
            throw JSONReadError("the string is not valid UTF-8", offset: span.start)
        }
        return valid
    }

    /// Decodes the escapes of a string (all of JSON's, `\u` surrogate pairs included); the runs between
    /// escapes are copied whole.
    private func unescapedString(_ span: StringSpan) throws -> String {
        var decoded: [UInt8] = []
        decoded.reserveCapacity(span.end - span.start)
        var index = span.start
        var runStart = index
        while index < span.end {
            guard bytes[index] == UInt8(ascii: "\\") else {
                index += 1
                continue
            }
            decoded.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[runStart..<index]).bindMemory(to: UInt8.self))
            let escaped = index + 1 < span.end ? bytes[index + 1] : 0
            index += 2
            switch escaped {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(escaped)
            case UInt8(ascii: "b"): decoded.append(0x08)
            case UInt8(ascii: "f"): decoded.append(0x0C)
            case UInt8(ascii: "n"): decoded.append(0x0A)
            case UInt8(ascii: "r"): decoded.append(0x0D)
            case UInt8(ascii: "t"): decoded.append(0x09)
            case UInt8(ascii: "u"):
                let scalar = try unicodeEscape(at: &index, end: span.end)
                decoded.append(contentsOf: UTF8.encode(scalar)!)
            default:
                throw JSONReadError("invalid escape \\\(Character(Unicode.Scalar(escaped)))", offset: index - 2)
            }
            runStart = index
        }
        decoded.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[runStart..<span.end]).bindMemory(to: UInt8.self))
        // What `\u` escapes add is UTF-8 already: only raw bytes of 0x80 and above need checking.
        if span.isASCII { return String(decoding: decoded, as: UTF8.self) }
        guard let text = String(validating: decoded, as: UTF8.self) else { throw JSONReadError("the string is not valid UTF-8", offset: span.start) }
        return text
    }

    /// The scalar of `\uXXXX` (index just past the `u`), or of a `\uD8xx\uDCxx` surrogate pair.
    private func unicodeEscape(at index: inout Int, end: Int) throws -> Unicode.Scalar {
        guard index + 4 <= end, let first = hexQuad(at: index) else { throw JSONReadError("expected four hex digits after \\u", offset: index) }
        index += 4
        switch first {
        case 0xD800...0xDBFF:
            guard index + 6 <= end, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u"),
                let second = hexQuad(at: index + 2), (0xDC00...0xDFFF).contains(second)
            else { throw JSONReadError("a high surrogate \\u escape must be followed by a low surrogate one", offset: index - 6) }
            index += 6
            return Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))!
        case 0xDC00...0xDFFF:
            throw JSONReadError("a low surrogate \\u escape without a high one before it", offset: index - 6)
        default:
            return Unicode.Scalar(first)!
        }
    }

    private func hexQuad(at index: Int) -> UInt32? {
        guard index + 4 <= bytes.count else { return nil }
        var value: UInt32 = 0
        for byte in bytes[index..<index + 4] {
            guard let digit = byte.hexDigitValue else { return nil }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    // MARK: Numbers

    /// The bytes of a number in JSON's syntax: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    private struct NumberSpan {
        var start: Int
        var end: Int
        /// Only an optional minus and digits.
        var isInteger: Bool
        /// A digit other than zero before the exponent: a value that reads as zero underflowed.
        var hasNonzeroDigit: Bool
    }

    private mutating func scanNumber() throws -> NumberSpan {
        skipWhitespace()
        let start = offset
        var hasNonzeroDigit = false
        func digits(_ reader: inout JSONReader, countingNonzero: Bool) -> Int {
            let first = reader.offset
            while let byte = reader.peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                if countingNonzero && byte != UInt8(ascii: "0") { hasNonzeroDigit = true }
                reader.offset += 1
            }
            return reader.offset - first
        }
        if peek() == UInt8(ascii: "-") { offset += 1 }
        let leadingZero = peek() == UInt8(ascii: "0")
        let integerDigits = digits(&self, countingNonzero: true)
        guard integerDigits > 0 else { throw JSONReadError("expected a number", offset: start) }
        guard !leadingZero || integerDigits == 1 else { throw JSONReadError("a number may not start with 0", offset: start) }
        var isInteger = true
        if peek() == UInt8(ascii: ".") {
            offset += 1
            isInteger = false
            guard digits(&self, countingNonzero: true) > 0 else { throw error("expected a digit after the decimal point") }
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            offset += 1
            isInteger = false
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { offset += 1 }
            guard digits(&self, countingNonzero: false) > 0 else { throw error("expected a digit in the exponent") }
        }
        return NumberSpan(start: start, end: offset, isInteger: isInteger, hasNonzeroDigit: hasNonzeroDigit)
    }

    /// An integer's value, accumulated negatively so that Int64.min fits; nil when out of range.
    private func integerValue(_ number: NumberSpan) -> Int64? {
        let negative = bytes[number.start] == UInt8(ascii: "-")
        var value: Int64 = 0
        for byte in bytes[(negative ? number.start + 1 : number.start)..<number.end] {
            let (shifted, overflowed) = value.multipliedReportingOverflow(by: 10)
            let (next, underflowed) = shifted.subtractingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            if overflowed || underflowed { return nil }
            value = next
        }
        return negative ? value : (value == .min ? nil : -value)
    }

    private func doubleValue(_ number: NumberSpan) throws -> Double {
        // Integers of up to 15 digits are exact in a Double; the rest goes through the standard library's parser.
        if number.isInteger, number.end - number.start <= 15, let integer = integerValue(number) {
            return integer == 0 && bytes[number.start] == UInt8(ascii: "-") ? -0.0 : Double(integer)
        }
        let value = parsedDouble(number)
        guard value.isFinite, value != 0 || !number.hasNonzeroDigit else { throw JSONReadError("the number is out of range", offset: number.start) }
        return value
    }

    /// The nearest Double, infinite when too large and zero when too small.
    private func parsedDouble(_ number: NumberSpan) -> Double {
        Double(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[number.start..<number.end]), as: UTF8.self)) ?? .nan
    }

    private static func isNumberByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"), UInt8(ascii: "+"), UInt8(ascii: "-"):
            true
        default: false
        }
    }

    // MARK: UUIDs and timestamps

    private static func uuid(_ text: UnsafeRawBufferPointer) -> UUID? {
        guard text.count == 36 else { return nil }
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let parsed = withUnsafeMutableBytes(of: &uuid) { target -> Bool in
            var index = 0
            for position in 0..<16 {
                if index == 8 || index == 13 || index == 18 || index == 23 {
                    guard text[index] == UInt8(ascii: "-") else { return false }
                    index += 1
                }
                guard let high = text[index].hexDigitValue, let low = text[index + 1].hexDigitValue else { return false }
                target[position] = high << 4 | low
                index += 2
            }
            return true
        }
        return parsed ? UUID(uuid: uuid) : nil
    }
}

/// An object key as read, compared without making a String: `switch key { case "appId": ... }`.
public struct JSONKey: CustomStringConvertible {
    fileprivate let bytes: UnsafeRawBufferPointer

    public static func ~= (name: StaticString, key: JSONKey) -> Bool {
        name.withUTF8Buffer { text in
            text.count == key.bytes.count && (text.isEmpty || memcmp(text.baseAddress!, key.bytes.baseAddress!, text.count) == 0)
        }
    }

    public var description: String { String(decoding: bytes, as: UTF8.self) }
}

/// Malformed or unexpected JSON: what was wrong, the byte offset, and the path of keys to it.
public struct JSONReadError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public var offset: Int
    /// e.g. `events[3].content.priority`; empty at the top level.
    public var path: String

    init(_ message: String, offset: Int) {
        self.message = message
        self.offset = offset
        path = ""
    }

    /// The error as seen from the container holding `step` (a key or an `[index]`).
    func inside(_ step: String) -> JSONReadError {
        var error = self
        error.path = path.isEmpty ? step : path.hasPrefix("[") ? step + path : step + "." + path
        return error
    }

    public var description: String {
        path.isEmpty ? "\(message) (at byte \(offset))" : "\(path): \(message) (at byte \(offset))"
    }
}
