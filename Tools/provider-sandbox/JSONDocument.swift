/// What a strict single pass over a UTF-8 JSON document (RFC 8259) found, without building it:
/// the checks of a push payload need the kind of the top-level value and of one of its members.
///
/// Accepts what `JSONSerialization` accepts of UTF-8 input (nesting up to 512 deep, numbers that
/// fit a `Double`, the last of repeated keys winning) except its leniencies: trailing commas, a byte
/// order mark, UTF-16 or UTF-32 text (none of which a record, being UTF-8 JSON, could hold), a byte
/// order mark opening a key (which it drops), and an overflowing number under a key that repeats.
struct JSONDocument {
    enum Kind {
        case object, array, string, number, boolean, null
    }

    /// The kind of the top-level value.
    let kind: Kind
    /// The kind of the value of the inspected top-level member (the last one, if the name repeats);
    /// nil when there is no such member or the document is not an object.
    let memberKind: Kind?
    /// Whether there is whitespace outside strings (which `JSONText.compact` removes).
    let hasWhitespace: Bool

    /// Checks `bytes`, noting the kind of the top-level member named `member`, if any; nil if they
    /// are not one valid JSON document.
    init?(_ bytes: [UInt8], inspecting member: String? = nil) {
        guard let scan = bytes.withUnsafeBufferPointer({ buffer in
            var scanner = Scanner(bytes: buffer, member: member)
            return scanner.document().map { kind in
                (kind: kind, memberKind: scanner.memberKind, hasWhitespace: scanner.hasWhitespace)
            }
        }) else { return nil }
        kind = scan.kind
        memberKind = scan.memberKind
        hasWhitespace = scan.hasWhitespace
    }
}

/// The recursive-descent scan behind `JSONDocument`; its recursion is as deep as the nesting (at most 512).
private struct Scanner {
    /// `JSONSerialization`'s limit on nested arrays and objects.
    private static let maximumDepth = 512
    /// Longest number without an exponent that cannot overflow a `Double` (whose largest has 309 digits).
    private static let longestSafeNumber = 300

    let bytes: UnsafeBufferPointer<UInt8>
    /// The name of the top-level member whose kind to note.
    let member: String?
    private(set) var memberKind: JSONDocument.Kind?
    private(set) var hasWhitespace = false
    private var position = 0
    private var depth = 0

    init(bytes: UnsafeBufferPointer<UInt8>, member: String?) {
        self.bytes = bytes
        self.member = member
    }

    /// The kind of the one value that, with optional whitespace around it, makes up the bytes.
    mutating func document() -> JSONDocument.Kind? {
        skipWhitespace()
        guard let kind = value(isTopLevel: true) else { return nil }
        skipWhitespace()
        return position == bytes.count ? kind : nil
    }

    private var current: UInt8? {
        position < bytes.count ? bytes[position] : nil
    }

    private mutating func skipWhitespace() {
        while let byte = current,
            byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
                || byte == UInt8(ascii: "\t")
        {
            hasWhitespace = true
            position += 1
        }
    }

    private mutating func value(isTopLevel: Bool = false) -> JSONDocument.Kind? {
        guard let byte = current else { return nil }
        let (kind, isValid): (JSONDocument.Kind, Bool) =
            switch byte {
            case UInt8(ascii: "{"): (.object, object(isTopLevel: isTopLevel))
            case UInt8(ascii: "["): (.array, array())
            case UInt8(ascii: "\""): (.string, string() != nil)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): (.number, number())
            case UInt8(ascii: "t"): (.boolean, literal("true"))
            case UInt8(ascii: "f"): (.boolean, literal("false"))
            case UInt8(ascii: "n"): (.null, literal("null"))
            default: (.null, false)
            }
        return isValid ? kind : nil
    }

    /// Enters a `{` or `[` unless that nests too deep.
    private mutating func enterContainer() -> Bool {
        guard depth < Self.maximumDepth else { return false }
        depth += 1
        position += 1
        skipWhitespace()
        return true
    }

    private mutating func object(isTopLevel: Bool) -> Bool {
        guard enterContainer() else { return false }
        defer { depth -= 1 }
        if current == UInt8(ascii: "}") {
            position += 1
            return true
        }
        while true {
            guard current == UInt8(ascii: "\""), let key = string() else { return false }
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { return false }
            position += 1
            skipWhitespace()
            guard let kind = value() else { return false }
            if isTopLevel && isMember(key) {
                memberKind = kind
            }
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","):
                position += 1
                skipWhitespace()
            case UInt8(ascii: "}"):
                position += 1
                return true
            default:
                return false
            }
        }
    }

    private mutating func array() -> Bool {
        guard enterContainer() else { return false }
        defer { depth -= 1 }
        if current == UInt8(ascii: "]") {
            position += 1
            return true
        }
        while true {
            guard value() != nil else { return false }
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","):
                position += 1
                skipWhitespace()
            case UInt8(ascii: "]"):
                position += 1
                return true
            default:
                return false
            }
        }
    }

    /// A string starting at the current `"`: its content as written (escapes undecoded), and
    /// whether it has escapes.
    private mutating func string() -> (content: Range<Int>, hasEscapes: Bool)? {
        position += 1
        let start = position
        var hasEscapes = false
        while let byte = current {
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                return (start..<position - 1, hasEscapes)
            case UInt8(ascii: "\\"):
                guard escape() != nil else { return nil }
                hasEscapes = true
            case 0..<0x20:
                return nil
            case 0x80...:
                guard multibyteCharacter() else { return nil }
            default:
                position += 1
            }
        }
        return nil
    }

    /// The character an escape sequence starting at the current `\` stands for.
    private mutating func escape() -> Unicode.Scalar? {
        guard position + 1 < bytes.count else { return nil }
        let letter = bytes[position + 1]
        position += 2
        switch letter {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): return Unicode.Scalar(letter)
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            guard let unit = hexQuad() else { return nil }
            // A high surrogate needs a low one after it; a lone low surrogate is no scalar (nil).
            guard (0xD800...0xDBFF).contains(unit) else { return Unicode.Scalar(unit) }
            guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"),
                bytes[position + 1] == UInt8(ascii: "u")
            else { return nil }
            position += 2
            guard let low = hexQuad(), (0xDC00...0xDFFF).contains(low) else { return nil }
            return Unicode.Scalar(0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00))
        default:
            return nil
        }
    }

    /// The UTF-16 code unit of the four hexadecimal digits at the current position.
    private mutating func hexQuad() -> UInt16? {
        guard position + 4 <= bytes.count else { return nil }
        var unit: UInt16 = 0
        for byte in bytes[position..<position + 4] {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            unit = unit << 4 | UInt16(digit)
        }
        position += 4
        return unit
    }

    /// A well-formed UTF-8 sequence of 2 to 4 bytes at the current position (Unicode Table 3-7:
    /// no overlong forms, surrogates or values past U+10FFFF).
    private mutating func multibyteCharacter() -> Bool {
        let lead = bytes[position]
        let (length, secondRange): (Int, ClosedRange<UInt8>) =
            switch lead {
            case 0xC2...0xDF: (2, 0x80...0xBF)
            case 0xE0: (3, 0xA0...0xBF)
            case 0xE1...0xEC, 0xEE...0xEF: (3, 0x80...0xBF)
            case 0xED: (3, 0x80...0x9F)
            case 0xF0: (4, 0x90...0xBF)
            case 0xF1...0xF3: (4, 0x80...0xBF)
            case 0xF4: (4, 0x80...0x8F)
            default: (0, 0...0)
            }
        guard length > 0, position + length <= bytes.count, secondRange.contains(bytes[position + 1]) else {
            return false
        }
        for offset in 2..<length where !(0x80...0xBF).contains(bytes[position + offset]) {
            return false
        }
        position += length
        return true
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, whose value is finite as a `Double`.
    private mutating func number() -> Bool {
        let start = position
        if current == UInt8(ascii: "-") { position += 1 }
        if current == UInt8(ascii: "0") {
            position += 1
        } else if !digits() {
            return false
        }
        if current == UInt8(ascii: ".") {
            position += 1
            guard digits() else { return false }
        }
        var hasExponent = false
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            hasExponent = true
            position += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { position += 1 }
            guard digits() else { return false }
        }
        guard hasExponent || position - start > Self.longestSafeNumber else { return true }
        return Double(String(decoding: bytes[start..<position], as: UTF8.self))?.isFinite ?? false
    }

    /// One or more ASCII digits.
    private mutating func digits() -> Bool {
        let start = position
        while let byte = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
            position += 1
        }
        return position > start
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        let length = word.utf8CodeUnitCount
        guard position + length <= bytes.count,
            UnsafeBufferPointer(start: word.utf8Start, count: length).elementsEqual(bytes[position..<position + length])
        else { return false }
        position += length
        return true
    }

    /// Whether a key (as `string()` answered it) names the inspected member once its escapes are decoded.
    private func isMember(_ key: (content: Range<Int>, hasEscapes: Bool)) -> Bool {
        guard let member else { return false }
        guard key.hasEscapes else { return bytes[key.content].elementsEqual(member.utf8) }
        var decoder = Scanner(bytes: UnsafeBufferPointer(rebasing: bytes[key.content]), member: nil)
        var decoded: [UInt8] = []
        while let byte = decoder.current {
            if byte == UInt8(ascii: "\\"), let scalar = decoder.escape() {
                decoded.append(contentsOf: scalar.utf8)
            } else {
                decoded.append(byte)
                decoder.position += 1
            }
        }
        return decoded.elementsEqual(member.utf8)
    }
}
