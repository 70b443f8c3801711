import Foundation
import NotifyJSON
import NotifyModels
import Testing

/// `JSONReader` reads values as JSONDecoder reads them (compared through `JSONValue`), and refuses what it refuses.
@Suite("JSON reader")
struct JSONReaderTests {
    @Test("values are read as JSONDecoder reads them into JSONValue", arguments: [
        "null", "true", "false", "0", "-0", "7", "-7", "2.5", "1e2", "1E+2", "1e-2", "0.1", "1e-320", "4.9e-324", "1.7976931348623157e308",
        "12345678901234567890", "123456789012345678901234567890", "3.141592653589793238462643383",
        "1e400", "-1e400", "1e-400", "01", "1.", ".5", "+1", "-", "1e", "0x10", "NaN", "Infinity", "tru", "nul", "True",
        #""""#, #""plain""#, #""a\u0041\/\b\f\n\r\t\"\\""#, #""\ud83d\ude00\uD83D\uDE00""#, #""\uDBFF\uDFFF\uFFFF\u0000""#, #""\u00e9""#,
        #""\ud83d""#, #""\ude00""#, #""\ud83dx""#, #""\ud83d\u0041""#, #""\x""#, #""\U0041""#, #""\u004""#, #""\u004g""#, "\"tab\there\"",
        "\"\u{7F} é ✓ 😀\"", #""unterminated"#, #""\"#,
        "[]", "[1,2,3]", "[1,]", "[,]", "[1,,2]", "[1 2]", "[", "]", "[[[]]]", #"[1,"a",[true,{"b":null}]]"#,
        "{}", #"{"a":1}"#, #"{"a":1,}"#, "{,}", #"{"a":1,,}"#, #"{"a" 1}"#, #"{"a":}"#, "{a:1}", "{'a':1}", #"{"a":1 "b":2}"#,
        #"{"a":1,"a":2}"#, #"{"a":{"b":[1,{"c":"d"}]},"e":[]}"#, #"{"\u0061":1}"#, #"{"a":1}}"#, #"{"a":1"#,
        " \t\r\n[ 1 , 2 ]\n ", "\u{FEFF}[1]", "[1] x", "[1][2]", "", " ", "\u{0}", "[1]\u{0}", "\u{C}[1]",
    ])
    func values(document: String) throws {
        try expectSameAsJSONDecoder(Data(document.utf8))
    }

    @Test("bytes that are not UTF-8 are refused inside strings, and in keys")
    func invalidUTF8() throws {
        for bytes: [UInt8] in [[0x22, 0xFF, 0x22], [0x22, 0xC3, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xC3, 0xA9, 0x22],
                               [0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D], [0x5B, 0x22, 0xF0, 0x9F, 0x98, 0x80, 0x22, 0x5D]] {
            try expectSameAsJSONDecoder(Data(bytes))
        }
    }

    @Test("512 levels of nesting are read, 513 are refused, and 100,000 are refused without exhausting the stack")
    func nesting() throws {
        for depth in [511, 512, 513] {
            try expectSameAsJSONDecoder(Data((String(repeating: "[", count: depth) + String(repeating: "]", count: depth)).utf8))
            try expectSameAsJSONDecoder(Data((String(repeating: #"{"a":"#, count: depth) + "1" + String(repeating: "}", count: depth)).utf8))
        }
        let deep = Data((String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)).utf8)
        #expect(throws: JSONReadError.self) { try JSONReader.read(deep) { try $0.readValue() } }
    }

    @Test("a repeated key: the first one counts, and the later value is only checked for its structure")
    func repeatedKeys() throws {
        let value = try JSONReader.read(Data(#"{"a":1,"a":"\q","b":{"a":null,"a":2}}"#.utf8)) { try $0.readValue() }
        #expect(value == .object(["a": .number(1), "b": .object(["a": .null])]))
    }

    @Test("timestamps: 10,000 random wire timestamps from 1600 to 9999, with 0 to 9 fraction digits, read to the Date Foundation parses")
    func timestamps() throws {
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: false, timeZone: .gmt)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<10_000 {
            let seconds = Int64.random(in: -11_676_096_000...253_402_300_799, using: &generator)
            let fraction = String((0..<Int.random(in: 0...9, using: &generator)).map { _ in "0123456789".randomElement(using: &generator)! })
            let text = Date(timeIntervalSince1970: Double(seconds)).formatted(style).dropLast() + (fraction.isEmpty ? "" : "." + fraction) + "Z"
            let date = try JSONReader.read(Data("\"\(text)\"".utf8)) { try $0.readTimestamp() }
            #expect(date == WireCoding.parseTimestamp(String(text)), "\(text)")
        }
    }

    @Test("timestamps in other forms are read as WireCoding.parseTimestamp reads them, or refused", arguments: [
        "2026-01-31T12:00:00Z", "2026-01-31T12:00:00.123Z", "2026-01-31T12:00:00.1234567891Z", "2026-01-31T12:00:00+02:00",
        "2026-01-31T12:00:00.5+0200", "2026-02-30T12:00:00Z", "2026-01-31T24:00:00Z", "2026-01-31T12:60:00Z", "2024-02-29T23:59:59.999Z",
        "2023-02-29T00:00:00Z", "1500-06-01T00:00:00Z", "0001-01-01T00:00:00Z", "12026-01-31T12:00:00Z", "2026-01-31T12:00:00.123z",
        "2026-01-31 12:00:00Z", "2026-01-31T12:00:00", "2026-1-31T12:00:00Z", "2026-01-31T12:00:00.Z", "yesterday", "",
    ])
    func otherTimestamps(text: String) {
        let date = try? JSONReader.read(Data("\"\(text)\"".utf8)) { try $0.readTimestamp() }
        #expect(date == WireCoding.parseTimestamp(text))
    }

    @Test("UUIDs are read as UUID(uuidString:) reads them", arguments: [
        "0E0B5F3C-9A57-4A8E-8F8B-2B9A0C5D6E7F", "0e0b5f3c-9a57-4a8e-8f8b-2b9a0c5d6e7f", "0e0b5f3c9a574a8e8f8b2b9a0c5d6e7f",
        "{0e0b5f3c-9a57-4a8e-8f8b-2b9a0c5d6e7f}", "0e0b5f3c-9a57-4a8e-8f8b-2b9a0c5d6e7g", "0e0b5f3c-9a57-4a8e-8f8b-2b9a0c5d6e7f ",
        "0e0b5f3c-9a574a8e-8f8b-2b9a0c5d6e7f-", "533366+7-E1D3-4087-880F-E1209C8D3B0C", "",
    ])
    func uuids(text: String) {
        let uuid = try? JSONReader.read(Data("\"\(text)\"".utf8)) { try $0.readUUID() }
        #expect(uuid == UUID(uuidString: text))
    }

    @Test("integers are read as JSONDecoder reads an Int64", arguments: [
        "0", "-0", "7", "1.0", "1e2", "100e-2", "0.1e1", "1.5", "1e-2", "9223372036854775807", "9223372036854775808",
        "-9223372036854775808", "-9223372036854775809", "1e19", "18446744073709551615", "01", "-", "\"1\"", "true", "null",
        "1e-400", "-1e-400", "1.0000000000000001", "9007199254740991.0",
    ])
    func integers(text: String) {
        let read = try? JSONReader.read(Data(text.utf8)) { try $0.readInt64() }
        #expect(read == (try? JSONDecoder().decode(Int64.self, from: Data(text.utf8))))
    }

    @Test("an error names the path of keys and indexes to the value, and its byte offset")
    func errorsNameThePath() throws {
        let document = #"{"a":[{"b":1},{"b":{"c":tru}}]}"#
        let error = try #require(throws: JSONReadError.self) { try JSONReader.read(Data(document.utf8)) { try $0.readValue() } }
        #expect(error.path == "a[1].b.c")
        #expect(error.offset == document.utf8.count - 7)
        #expect(error.description.contains("a[1].b.c"))
    }

    private func expectSameAsJSONDecoder(_ document: Data, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let expected = Result { try JSONDecoder().decode(JSONValue.self, from: document) }
        let read = Result { try JSONReader.read(document) { try $0.readValue() } }
        switch (expected, read) {
        case (.success(let expected), .success(let read)):
            #expect(read == expected, sourceLocation: sourceLocation)
            if case .number(let expectedNumber) = expected, case .number(let readNumber) = read {
                #expect(readNumber.sign == expectedNumber.sign, "-0 stays negative", sourceLocation: sourceLocation)
            }
        case (.failure, .failure(let error)):
            #expect(error is JSONReadError, sourceLocation: sourceLocation)
        default:
            Issue.record("JSONDecoder: \(expected), JSONReader: \(read) for \(String(decoding: document, as: UTF8.self))", sourceLocation: sourceLocation)
        }
    }
}
