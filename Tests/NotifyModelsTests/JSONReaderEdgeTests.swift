import Foundation
import NotifyJSON
import NotifyModels
import Testing

/// JSONReader, which ingest reads publish bodies with, at the edges of JSON and of JSONDecoder's leniency.
@Suite struct JSONReaderEdgeTests {
    @Test("documents at the edges of JSON and of JSONDecoder's leniency are read as JSONDecoder reads them", arguments: [
        "", "{}", "[]", "null", #"{"events":null}"#, #"{"events":{}}"#, #"{"events":[]"#, #"{"events":[]} x"#, #"{"events":[]}{}"#,
        " \t\r\n{\"events\" :\n[ ] }\n", "\u{FEFF}{\"events\":[]}", #"{"events":[],}"#, #"{"events":[,]}"#, #"{,}"#,
        #"{"events":[],"events":null}"#, #"{"ev\u0065nts":[]}"#, #"{"events":[]"extra":1}"#, #"{events:[]}"#, #"{'events':[]}"#,
    ] + [
        // Members added to a valid request (see `request(with:)`).
        #""userId":"second""#, #""userId":null"#, #""eventSource":"source""#,
        #""eventSource":null,"eventSource":"later""#, #""eventSource":"x","eventSource":null"#, #""displayTimeToLive":1.0"#, #""displayTimeToLive":1e2"#,
        #""displayTimeToLive":-0"#, #""displayTimeToLive":9223372036854775807"#, #""displayTimeToLive":9223372036854775808"#, #""displayTimeToLive":-9223372036854775808"#,
        #""displayTimeToLive":01"#, #""displayTimeToLive":1."#, #""displayTimeToLive":.5"#, #""displayTimeToLive":+1"#, #""displayTimeToLive":1e-2"#, #""displayTimeToLive":100e-2"#,
        #""displayTimeToLive":1.5"#, #""displayTimeToLive":"1""#, #""displayTimeToLive":true"#, #""priority":"nope""#, #""priority":"Created""#,
        #""expirationDateTime":"2026-01-31T12:00:00Z""#, #""expirationDateTime":"2026-01-31T12:00:00.1Z""#, #""expirationDateTime":"2026-01-31T12:00:00.123456789Z""#,
        #""expirationDateTime":"2026-01-31T12:00:00.1234567891Z""#, #""expirationDateTime":"2026-01-31T12:00:00+02:00""#, #""expirationDateTime":"2026-01-31T12:00:00.5+0200""#,
        #""expirationDateTime":"2026-02-30T12:00:00Z""#, #""expirationDateTime":"2026-01-31T24:00:00Z""#, #""expirationDateTime":"2024-02-29T23:59:59.999Z""#,
        #""expirationDateTime":"1500-06-01T00:00:00Z""#, #""expirationDateTime":"2026-01-31T12:00:00.123z""#, #""expirationDateTime":"2026-01-31 12:00:00Z""#,
        #""expirationDateTime":"2026-01-31T12:00:00""#, #""expirationDateTime":"yesterday""#, #""expirationDateTime":"2026\u002d01-31T12:00:00Z""#, #""expirationDateTime":1"#,
        #""us\u0065rId":"escaped key""#,
        #""unknown":-"#, #""unknown":1.2.3"#, #""unknown":--1"#, #""unknown":+1"#, #""unknown":.5"#, #""unknown":01"#, #""unknown":1e400"#,
        #""unknown":"\q""#, #""unknown":"\u12""#, #""unknown":"\uu0001""#, #""unknown":"\ud800""#, "\"unknown\":\"\u{1}\"",
        #""unknown":[1,]"#, #""unknown":[,]"#, #""unknown":[1,,]"#, #""unknown":{"\q":1,}"#, #""unknown":{,}"#, #""unknown":nul"#,
        #""unknown":tru"#, #""unknown":[true,false,null,{}]"#, #""unknown":{"a" 1}"#, #""unknown":[1 2]"#, #""unknown":1x"#,
        #""userId":"a\u0041\/\b\f\n\r\t\"\\""#, #""userId":"\ud83d\ude00\uD83D\uDE00""#, #""userId":"\uDBFF\uDFFF\uFFFF\u0000""#,
        #""userId":"\ud83d""#, #""userId":"\ude00""#, #""userId":"\ud83dx""#, #""userId":"\ud83d\u0041""#, #""userId":"\x""#,
        #""userId":"\U0041""#, #""userId":"\u004""#, #""unknown":"\u"0001""#, #""unknown":"\u\"00""#, #""unknown":"\u00\"x""#,
        #""unknown":"\uZZZZ""#, #""unknown":"\u\\00""#, #""unknown":"\uabc\""#, "\"userId\":\"tab\there\"", "\"userId\":\"\u{7F} é ✓\"",
    ].map(Self.request(with:)))
    func edgeCases(document: String) {
        let data = Data(document.utf8)
        let expected = try? WireCoding.makeDecoder().decode(NotificationRequest.self, from: data)
        let decoded = Result { try JSONReader.read(data) { try NotificationRequest(reading: &$0) } }
        #expect(expected == (try? decoded.get()), "JSONDecoder: \(String(describing: expected)), ours: \(decoded)")
        if case .failure(let error) = decoded { #expect(error is JSONReadError) }
    }

    /// A request with `members` added after its own (a later repeated key does not count).
    static func request(with members: String) -> String {
        guard members.hasPrefix("\"") else { return members }
        return #"{"userId":"u","priority":"high","displayTimeToLive":3,"expirationDateTime":"2026-01-31T12:00:00.123Z","# + members + "}"
    }
}

/// Every prefix of `json`, and 20,000 copies with bytes changed, inserted or removed, are read by `read` as JSONDecoder
/// reads them: to the same value (compared through `compared`), or refused by both.
func expectReadAsJSONDecoderReads<Value: Decodable, Compared: Equatable>(
    damagedCopiesOf json: [UInt8], random: inout SeededRandom, comparing compared: (Value) -> Compared, read: ([UInt8]) throws -> Value,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let decoder = WireCoding.makeDecoder()
    func sameOutcome(_ bytes: [UInt8]) -> Bool {
        (try? decoder.decode(Value.self, from: Data(bytes))).map(compared) == (try? read(bytes)).map(compared)
    }
    for length in 0..<json.count { #expect(sameOutcome(Array(json[..<length])), "the first \(length) bytes", sourceLocation: sourceLocation) }
    for _ in 0..<20_000 {
        let bytes = random.damaged(json)
        #expect(sameOutcome(bytes), "\(String(decoding: bytes, as: UTF8.self))", sourceLocation: sourceLocation)
    }
}

/// Deterministic values for the round trips: every enum case, absent optionals, escapes and unicode, nested data.
struct SeededRandom {
    private var state: UInt64

    init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 | 1 }

    /// splitmix64
    mutating func next(upTo bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((mixed ^ (mixed >> 31)) % UInt64(bound))
    }

    mutating func flip() -> Bool { next(upTo: 2) == 0 }

    /// `document` with one to four bytes changed, removed or inserted, the inserted and new ones drawn from bytes
    /// that matter to JSON (structure, escapes, digits, literals) or to UTF-8.
    mutating func damaged(_ document: [UInt8]) -> [UInt8] {
        var bytes = document
        for _ in 0...next(upTo: 3) {
            let index = next(upTo: bytes.count)
            let replacement = Self.damagingBytes[next(upTo: Self.damagingBytes.count)]
            switch next(upTo: 3) {
            case 0: bytes[index] = replacement
            case 1: bytes.remove(at: index)
            default: bytes.insert(replacement, at: index)
            }
        }
        return bytes
    }

    private static let damagingBytes = Array("{}[]\",:\\u0123456789.eE+- tfnl\u{7F}".utf8) + [0x00, 0x1F, 0x0A, 0x80, 0xC3, 0xFF]
    mutating func pick<Value>(_ values: [Value]) -> Value { values[next(upTo: values.count)] }

    mutating func text() -> String {
        let pieces = ["plain", "", "quote \" backslash \\ slash /", "line\nbreak\ttab\r", "\u{0}\u{1}\u{1F}\u{7F}", "héllo wörld", "✓ ≠ ∞",
                      "emoji 😀👍🏽🇫🇷", "日本語", "\u{FEFF}bom", "{\"json\":[1,2]}", String(repeating: "long ", count: 40)]
        return (0..<1 + next(upTo: 3)).map { _ in pick(pieces) }.joined()
    }

    /// Between 1900 and 2200, one that reads back equal once written. (Not every Date does: the wire keeps
    /// milliseconds, and a Date read from `.123Z` can be written back as `.122Z`, so it is read and written until stable.)
    mutating func date() -> Date {
        var date = Date(timeIntervalSince1970: Double(Int64(next(upTo: 9_467_280_000_000)) - 2_208_988_800_000) / 1000)
        while let read = WireCoding.parseTimestamp(WireCoding.formatTimestamp(date)), read != date { date = read }
        return date
    }

    mutating func value(depth: Int = 0) -> JSONValue {
        switch next(upTo: depth > 2 ? 4 : 6) {
        case 0: return .null
        case 1: return .bool(flip())
        case 2: return .number(pick([0, -1, 42, 2.5, -1e-7, 1e300, 123_456_789_012, 0.1]))
        case 3: return .string(text())
        case 4: return .array((0..<next(upTo: 4)).map { _ in value(depth: depth + 1) })
        default: return .object(Dictionary((0..<next(upTo: 4)).map { _ in (text(), value(depth: depth + 1)) }, uniquingKeysWith: { first, _ in first }))
        }
    }

    mutating func content() -> NotificationContent {
        let visual = flip() ? VisualContent(title: flip() ? text() : nil, body: flip() ? text() : nil) : nil
        let data = flip() ? Dictionary((0..<next(upTo: 4)).map { _ in (text(), value()) }, uniquingKeysWith: { first, _ in first }) : nil
        let push = flip()
            ? PushOptions(
                sound: flip() ? text() : nil, category: flip() ? text() : nil, threadId: flip() ? text() : nil, title: flip() ? text() : nil,
                body: flip() ? text() : nil, data: data)
            : nil
        return NotificationContent(
            appNotificationId: flip() ? text() : nil, groupName: flip() ? text() : nil, priority: pick(NotificationPriority.allCases),
            expirationDateTime: date(), displayTimeToLive: flip() ? next(upTo: 100_000) - 10 : nil,
            platformTypes: flip() ? (0..<next(upTo: 4)).map { _ in pick(Platform.allCases) } : nil,
            payload: NotificationPayload(rawContent: flip() ? text() : nil, visualContent: visual), push: push)
    }
}
