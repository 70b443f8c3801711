/// Hand-written JSON text, for what `JSONEncoder` cannot do: embedding an already validated JSON
/// document (a push payload) verbatim, on one line, inside a record.
enum JSONText {
    /// `value` as a JSON string literal, quotes included.
    static func quoted(_ value: String) -> String {
        var text: [UInt8] = []
        appendQuoted(value, to: &text)
        return String(decoding: text, as: UTF8.self)
    }

    /// Appends `value` as a JSON string literal, quotes included: `"`, `\` and control characters
    /// escaped, everything else (non-ASCII included) as is. Runs without anything to escape are
    /// copied whole.
    static func appendQuoted(_ value: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            var runStart = 0
            for (index, byte) in utf8.enumerated()
            where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                output.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
                switch byte {
                case UInt8(ascii: "\""): output.append(contentsOf: #"\""#.utf8)
                case UInt8(ascii: "\\"): output.append(contentsOf: #"\\"#.utf8)
                case UInt8(ascii: "\n"): output.append(contentsOf: #"\n"#.utf8)
                case UInt8(ascii: "\r"): output.append(contentsOf: #"\r"#.utf8)
                case UInt8(ascii: "\t"): output.append(contentsOf: #"\t"#.utf8)
                default:
                    output.append(contentsOf: #"\u00"#.utf8)
                    output.append(hexDigit(byte >> 4))
                    output.append(hexDigit(byte & 0xF))
                }
                runStart = index + 1
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
        }
        output.append(UInt8(ascii: "\""))
    }

    /// A valid JSON document with its insignificant whitespace removed, so it fits on one line
    /// (JSON strings cannot hold raw line breaks, so none remain).
    static func compact(_ document: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(document.count)
        var inString = false
        var escaped = false
        for byte in document {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
            } else {
                switch byte {
                case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): continue
                case UInt8(ascii: "\""): inString = true
                default: break
                }
            }
            output.append(byte)
        }
        return output
    }

    /// The lower-case hexadecimal digit of `value` (0...15).
    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") - 10 + value
    }
}
