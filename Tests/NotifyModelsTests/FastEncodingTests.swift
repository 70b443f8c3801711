import Foundation
import NotifyJSON
import NotifyModels
import Testing

/// The hand-written encodings on the push path say exactly what the Codable ones say.
@Suite("Hand-written wire encodings")
struct FastEncodingTests {
    /// Foundation's ISO 8601 style for the millisecond `date` stands for. It truncates, so a millisecond stored just
    /// below itself (e.g. 1_795_000_000.123) would come out one lower; a tenth of a millisecond more avoids that.
    private func foundationText(_ date: Date) -> String {
        date.addingTimeInterval(0.0001).formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt))
    }

    @Test("timestamps are written as Foundation's ISO 8601 style writes them, before and after 1970 and on leap days", arguments: [
        0, 1_795_000_000.123, 951_782_400.999, -1.5, -86_400 * 365.25 * 30, 4_102_444_800.5, 1_709_164_800,
    ])
    func timestamps(seconds: Double) {
        let date = Date(timeIntervalSince1970: (seconds * 1000).rounded() / 1000)
        let foundation = foundationText(date)
        #expect(WireCoding.formatTimestamp(date) == foundation)
        var writer = JSONWriter()
        writer.timestamp(date)
        #expect(String(decoding: writer.bytes, as: UTF8.self) == "\"\(foundation)\"")
        #expect(WireCoding.parseTimestamp(foundation) == WireCoding.parseTimestamp(WireCoding.formatTimestamp(date)))
    }

    @Test("10,000 random wire timestamps, parsed and written again, come out unchanged (no millisecond lost per hop)")
    func parsedTimestampsWriteBackUnchanged() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<10_000 {
            let milliseconds = Int64.random(in: 0...4_102_444_800_000, using: &generator)
            let text = WireCoding.formatTimestamp(Date(timeIntervalSince1970: Double(milliseconds) / 1000))
            guard let parsed = WireCoding.parseTimestamp(text) else {
                Issue.record("\(text) did not parse")
                continue
            }
            #expect(WireCoding.formatTimestamp(parsed) == text)
        }
    }

    @Test("10,000 random millisecond dates between 1900 and 2200 are written as Foundation writes them")
    func randomTimestamps() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<10_000 {
            let milliseconds = Int64.random(in: -2_208_988_800_000...7_258_118_400_000, using: &generator)
            let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
            #expect(WireCoding.formatTimestamp(date) == foundationText(date), "\(milliseconds) ms")
        }
    }

    @Test("integers and UUIDs are written as String(_:) and uuidString.lowercased() give them")
    func integersAndUUIDs() {
        for value in [0, 7, -7, 1_000_000, Int64.max, Int64.min] {
            var writer = JSONWriter()
            writer.integer(value)
            #expect(String(decoding: writer.bytes, as: UTF8.self) == String(value))
        }
        let extremes = [UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)), UUID(uuidString: "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")!]
        for id in extremes + (0..<1_000).map({ _ in UUID() }) {
            var writer = JSONWriter()
            writer.uuid(id)
            #expect(String(decoding: writer.bytes, as: UTF8.self) == "\"\(id.uuidString.lowercased())\"")
            #expect(id.lowercasedString == id.uuidString.lowercased())
        }
    }

    @Test("a quote, backslash, control character or non-ASCII letter at every place of strings of 0 to 40 bytes: written, the string JSONDecoder reads back; read, what JSONDecoder reads")
    func stringsAroundEveryWordBoundary() throws {
        for special in ["\"", "\\", "\n", "\u{1}", "\u{1F}", "é", "✓", "/", "\u{7F}"] {
            for length in 0...40 {
                for place in 0...length {
                    let plain = String(repeating: "a", count: length)
                    let text = String(plain.prefix(place)) + special + String(plain.dropFirst(place))
                    var writer = JSONWriter()
                    writer.string(text)
                    #expect(try JSONDecoder().decode(String.self, from: Data(writer.bytes)) == text, "written: \(text.debugDescription)")
                    let encoded = try JSONEncoder().encode(text)
                    #expect(try JSONReader.read(encoded) { try $0.readString() } == text, "read: \(text.debugDescription)")
                }
            }
            // A string without its closing quote is refused, whatever ends the bytes.
            if special != "\"" {
                let unterminated = Data(("\"" + String(repeating: "b", count: 20) + special).utf8)
                #expect(throws: JSONReadError.self) { try JSONReader.read(unterminated) { try $0.readString() } }
            }
        }
        // So is a raw control character after a long plain run, as JSONDecoder refuses it.
        let rawControl = Data(("\"" + String(repeating: "c", count: 17) + "\u{1}\"").utf8)
        #expect(throws: JSONReadError.self) { try JSONReader.read(rawControl) { try $0.readString() } }
        #expect(throws: (any Error).self) { try JSONDecoder().decode(String.self, from: rawControl) }
    }

    @Test("bytes are written in hexadecimal as String(format: \"%02x\") writes each, and hex digits read back as UInt8(_:radix: 16) reads them")
    func lowercaseHex() {
        let bytes = (0...255).map(UInt8.init) + (0..<64).map { _ in UInt8.random(in: 0...255) }
        #expect(bytes.lowercaseHex == bytes.map { String(format: "%02x", $0) }.joined())
        #expect([UInt8]().lowercaseHex == "")
        for byte in UInt8.min...UInt8.max {
            #expect(byte.hexDigitValue == UInt8(String(decoding: [byte], as: UTF8.self), radix: 16), "byte \(byte)")
        }
    }

    @Test("a stored content's JSON (every push option, the deep link and Android channel included) reads back as the same content")
    func contentJSONReadsBack() throws {
        let content = NotificationContent(
            appNotificationId: "a-1", groupName: "orders", priority: .low, expirationDateTime: Date(timeIntervalSince1970: 1_800_000_000.5),
            displayTimeToLive: 60, platformTypes: [.fcm, .wns], payload: NotificationPayload(rawContent: "r", visualContent: VisualContent(title: "T")),
            push: PushOptions(
                sound: "s", criticalSound: true, category: "c", threadId: "t", title: "tt", subtitle: "st", body: "b", titleLocKey: "TK",
                titleLocArgs: ["1"], bodyLocKey: "BK", bodyLocArgs: ["2"], imageUrl: "https://cdn.example.com/i.png", launchImage: "L",
                mutableContent: true, interruptionLevel: .passive, relevanceScore: 0.5, badge: 3, delivery: .silent,
                url: "myapp://orders/42", androidChannelId: "orders", data: ["category": .string("x")]))
        let read = try WireCoding.makeDecoder().decode(NotificationContent.self, from: Data(content.encodedJSONString().utf8))
        #expect(read == content)
    }

    @Test("push ids are what they were before this change: the name-based UUID of push, both uuidStrings and the sequence")
    func pushIDsAreStable() {
        let notificationId = UUID(uuidString: "0E0B5F3C-9A57-4A8E-8F8B-2B9A0C5D6E7F")!
        let subscriptionId = UUID(uuidString: "5D1C2B3A-4E5F-4A6B-9C8D-7E6F5A4B3C2D")!
        // SHA-256 of "push\0<notification uuidString>\0<sequence>\0<subscription uuidString>\0", computed outside Swift.
        #expect(DeterministicID.pushID(notificationId: notificationId, sequence: 0, subscriptionId: subscriptionId)
            == UUID(uuidString: "CEB392E5-ED83-5C16-BC8C-271BB850D090"))
        #expect(DeterministicID.pushID(notificationId: notificationId, sequence: 42, subscriptionId: subscriptionId)
            == UUID(uuidString: "8EC8DB33-2771-5DF3-B542-F7D0842C2DAB"))
        #expect(
            DeterministicID.pushID(notificationId: notificationId, sequence: Int64.max, subscriptionId: subscriptionId)
                == DeterministicID.make("push", notificationId.uuidString, String(Int64.max), subscriptionId.uuidString))
    }
}
