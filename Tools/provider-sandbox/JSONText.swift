/// Hand-written JSON text, for what `JSONEncoder` cannot do: embedding an already validated JSON
/// document (a push payload) verbatim, on one line, inside a record.
enum JSONText {
    /// `value` as a JSON string literal, quotes included.
    static func quoted(_ value: String) -> String {
        var result = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    /// A JSON object of string values, keys sorted.
    static func object(_ fields: [String: String]) -> String {
        let members = fields.sorted { $0.key < $1.key }.map { quoted($0.key) + ":" + quoted($0.value) }
        return "{" + members.joined(separator: ",") + "}"
    }

    /// A valid JSON document with its insignificant whitespace removed, so it fits on one line
    /// (JSON strings cannot hold raw line breaks, so none remain).
    static func compact(_ document: some Sequence<UInt8>) -> String {
        var output: [UInt8] = []
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
        return String(decoding: output, as: UTF8.self)
    }
}
