import Foundation
import NotifyModels
import Testing

/// The hand-written decoders read exactly what `WireCoding.makeDecoder()` reads: the same values from the
/// same documents, and an error (never a crash) wherever JSONDecoder refuses a document.
@Suite("Hand-written wire decoders")
struct JSONDecodingTests {
    @Test("change-event batches, written by hand or by JSONEncoder, decode to the same events, for 300 varied batches")
    func changeEventBatchesRoundTrip() throws {
        var random = SeededRandom(seed: 1)
        for _ in 0..<300 {
            let batch = ChangeEventBatch(events: (0..<random.next(upTo: 5)).map { _ in random.changeEvent() })
            for json in [batch.encodedJSON(), try WireCoding.makeEncoder().encode(batch)] {
                let decoded = try ChangeEventBatch(decodingJSON: json)
                #expect(decoded.events == batch.events)
                #expect(decoded.events == (try WireCoding.makeDecoder().decode(ChangeEventBatch.self, from: json)).events)
            }
        }
    }

    @Test("push-job batches, written by hand or by JSONEncoder, decode to the same jobs, for 300 varied batches")
    func pushJobBatchesRoundTrip() throws {
        var random = SeededRandom(seed: 2)
        for _ in 0..<300 {
            // Runs of jobs that differ only in their device, as fanout makes them, between jobs that share nothing.
            var jobs: [PushJob] = []
            for _ in 0..<random.next(upTo: 5) {
                let shared = random.pushJob()
                for _ in 0..<random.next(upTo: 4) + 1 { jobs.append(random.device(of: shared)) }
            }
            let batch = PushJobBatch(jobs: jobs)
            for json in [batch.encodedJSON(), try WireCoding.makeEncoder().encode(batch)] {
                let decoded = try PushJobBatch(decodingJSON: json)
                #expect(decoded.jobs == batch.jobs)
                #expect(decoded.jobs == (try WireCoding.makeDecoder().decode(PushJobBatch.self, from: json)).jobs)
            }
        }
    }

    @Test("a push-job batch's shared fields and payload are written once per group, not once per device")
    func pushJobsShareTheirGroup() throws {
        var random = SeededRandom(seed: 3)
        let shared = random.pushJob()
        let batch = PushJobBatch(jobs: (0..<50).map { _ in random.device(of: shared) })
        let json = try #require(String(data: batch.encodedJSON(), encoding: .utf8))
        #expect(json.components(separatedBy: "\"payload\"").count == 2)
        #expect(json.components(separatedBy: "\"pushId\"").count == 51)
    }

    @Test("push-job messages written before groups existed ({\"jobs\":[...]}) are still read, by hand as by JSONDecoder")
    func pushJobListsAreStillRead() throws {
        /// The earlier message shape.
        struct JobList: Encodable { var jobs: [PushJob] }
        var random = SeededRandom(seed: 4)
        for _ in 0..<50 {
            let jobs = (0..<random.next(upTo: 5)).map { _ in random.pushJob() }
            let json = try WireCoding.makeEncoder().encode(JobList(jobs: jobs))
            #expect(try PushJobBatch(decodingJSON: json).jobs == jobs)
            #expect(try WireCoding.makeDecoder().decode(PushJobBatch.self, from: json).jobs == jobs)
        }
    }

    @Test("push-job batch documents at the edges are read as JSONDecoder reads them", arguments: [
        "{}", #"{"groups":null}"#, #"{"jobs":null}"#, #"{"groups":[]}"#, #"{"jobs":[]}"#, #"{"groups":null,"jobs":[]}"#,
        #"{"groups":[{}]}"#, #"{"groups":[{"targets":[]}]}"#, #"{"groups":{}}"#, #"{"groups":[],"groups":null}"#,
    ])
    func pushJobBatchEdges(document: String) {
        let hand = Result { try PushJobBatch(decodingJSON: Data(document.utf8)).jobs }
        let foundation = Result { try WireCoding.makeDecoder().decode(PushJobBatch.self, from: Data(document.utf8)).jobs }
        switch (hand, foundation) {
        case (.success(let handJobs), .success(let foundationJobs)): #expect(handJobs == foundationJobs)
        case (.failure, .failure): break
        default: Issue.record("hand-written: \(hand), JSONDecoder: \(foundation)")
        }
    }

    @Test("documents at the edges of JSON and of JSONDecoder's leniency are read as JSONDecoder reads them", arguments: [
        "", "{}", "[]", "null", #"{"events":null}"#, #"{"events":{}}"#, #"{"events":[]"#, #"{"events":[]} x"#, #"{"events":[]}{}"#,
        " \t\r\n{\"events\" :\n[ ] }\n", "\u{FEFF}{\"events\":[]}", #"{"events":[],}"#, #"{"events":[,]}"#, #"{,}"#,
        #"{"events":[],"events":null}"#, #"{"ev\u0065nts":[]}"#, #"{"events":[]"extra":1}"#, #"{events:[]}"#, #"{'events':[]}"#,
    ] + [
        // Members added to a valid event (see `event(with:)`).
        #""appId":"second""#, #""appId":null"#, #""content":null"#, #""originSubscriptionId":null"#, #""eventSource":"source""#,
        #""eventSource":null,"eventSource":"later""#, #""eventSource":"x","eventSource":null"#, #""sequence":1.0"#, #""sequence":1e2"#,
        #""sequence":-0"#, #""sequence":9223372036854775807"#, #""sequence":9223372036854775808"#, #""sequence":-9223372036854775808"#,
        #""sequence":01"#, #""sequence":1."#, #""sequence":.5"#, #""sequence":+1"#, #""sequence":1e-2"#, #""sequence":100e-2"#,
        #""unreadCount":1.5"#, #""unreadCount":"1""#, #""unreadCount":true"#, #""kind":"nope""#, #""kind":"Created""#,
        #""changedAt":"2026-01-31T12:00:00Z""#, #""changedAt":"2026-01-31T12:00:00.1Z""#, #""changedAt":"2026-01-31T12:00:00.123456789Z""#,
        #""changedAt":"2026-01-31T12:00:00.1234567891Z""#, #""changedAt":"2026-01-31T12:00:00+02:00""#, #""changedAt":"2026-01-31T12:00:00.5+0200""#,
        #""changedAt":"2026-02-30T12:00:00Z""#, #""changedAt":"2026-01-31T24:00:00Z""#, #""changedAt":"2024-02-29T23:59:59.999Z""#,
        #""changedAt":"1500-06-01T00:00:00Z""#, #""changedAt":"2026-01-31T12:00:00.123z""#, #""changedAt":"2026-01-31 12:00:00Z""#,
        #""changedAt":"2026-01-31T12:00:00""#, #""changedAt":"yesterday""#, #""changedAt":"2026\u002d01-31T12:00:00Z""#, #""changedAt":1"#,
        #""notificationId":"0E0B5F3C-9A57-4A8E-8F8B-2B9A0C5D6E7F""#, #""notificationId":"0e0b5f3c9a574a8e8f8b2b9a0c5d6e7f""#,
        #""notificationId":"{0e0b5f3c-9a57-4a8e-8f8b-2b9a0c5d6e7f}""#, #""notificationId":"0e0b5f3c-9a57-4a8e-8f8b-2b9a0c5d6e7g""#,
        #""notificationId":"0e0b5f3c-9a57-4a8e-8f8b-2b9a0c5d6e7\u0066""#, #""app\u0049d":"escaped key""#,
        #""devicesVersion":null"#, #""devicesVersion":3"#, #""devicesVersion":"3""#, #""devicesVersion":2.5"#,
        #""unknown":-"#, #""unknown":1.2.3"#, #""unknown":--1"#, #""unknown":+1"#, #""unknown":.5"#, #""unknown":01"#, #""unknown":1e400"#,
        #""unknown":"\q""#, #""unknown":"\u12""#, #""unknown":"\uu0001""#, #""unknown":"\ud800""#, "\"unknown\":\"\u{1}\"",
        #""unknown":[1,]"#, #""unknown":[,]"#, #""unknown":[1,,]"#, #""unknown":{"\q":1,}"#, #""unknown":{,}"#, #""unknown":nul"#,
        #""unknown":tru"#, #""unknown":[true,false,null,{}]"#, #""unknown":{"a" 1}"#, #""unknown":[1 2]"#, #""unknown":1x"#,
        #""userId":"a\u0041\/\b\f\n\r\t\"\\""#, #""userId":"\ud83d\ude00\uD83D\uDE00""#, #""userId":"\uDBFF\uDFFF\uFFFF\u0000""#,
        #""userId":"\ud83d""#, #""userId":"\ude00""#, #""userId":"\ud83dx""#, #""userId":"\ud83d\u0041""#, #""userId":"\x""#,
        #""userId":"\U0041""#, #""userId":"\u004""#, #""unknown":"\u"0001""#, #""unknown":"\u\"00""#, #""unknown":"\u00\"x""#,
        #""unknown":"\uZZZZ""#, #""unknown":"\u\\00""#, #""unknown":"\uabc\""#, "\"userId\":\"tab\there\"", "\"userId\":\"\u{7F} é ✓\"",
        #""content":{"priority":"high","expirationDateTime":"2026-01-31T12:00:00.5Z","payload":{}}"#,
        #""content":{"priority":"high","expirationDateTime":"2026-01-31T12:00:00.5Z"}"#,
        #""content":{"priority":"urgent","expirationDateTime":"2026-01-31T12:00:00.5Z","payload":{}}"#,
        #""content":{"priority":"low","expirationDateTime":"2026-01-31T12:00:00Z","payload":{"rawContent":null,"visualContent":{"title":null}},"platformTypes":["apns","apns-voip","fcm","wns","webpush"],"displayTimeToLive":null,"push":null}"#,
        #""content":{"priority":"low","expirationDateTime":"2026-01-31T12:00:00Z","payload":{},"platformTypes":["telegraph"]}"#,
        #""content":{"priority":"low","expirationDateTime":"2026-01-31T12:00:00Z","payload":{},"push":{"data":{"a":[1,2.5,-0,"x",true,null,{"b":{}}],"a":7,"c":1e-320,"d":12345678901234567890,"e":0.1}}}"#,
        #""content":{"priority":"low","expirationDateTime":"2026-01-31T12:00:00Z","payload":{},"push":{"data":{"c":1e-400}}}"#,
        #""content":{"priority":"low","expirationDateTime":"2026-01-31T12:00:00Z","payload":{},"push":{"data":{"c":1.8e308}}}"#,
        #""content":{"priority":"low","expirationDateTime":"2026-01-31T12:00:00Z","payload":{},"push":{"data":[]}}"#,
        #""content":{"priority":"low","expirationDateTime":"2026-01-31T12:00:00Z","payload":{},"push":{"data":{"s":"\q"}}}"#,
    ].map(Self.event(with:)))
    func edgeCases(document: String) {
        let data = Data(document.utf8)
        let expected = try? WireCoding.makeDecoder().decode(ChangeEventBatch.self, from: data)
        let decoded = Result { try ChangeEventBatch(decodingJSON: data) }
        #expect(expected?.events == (try? decoded.get())?.events, "JSONDecoder: \(String(describing: expected)), ours: \(decoded)")
        if case .failure(let error) = decoded { #expect(error is JSONReadError) }
    }

    @Test("every prefix of a document, and 20,000 documents with bytes changed, inserted or removed, are read as JSONDecoder reads them")
    func damagedDocuments() throws {
        var random = SeededRandom(seed: 3)
        // Sequences stay below 2^53: JSONDecoder reads a larger integer written with a fraction (a changed byte can
        // make one) through Decimal, which the reader does not copy (it refuses such a number).
        let events = (0..<3).map { _ in
            var event = random.changeEvent()
            event.sequence = Int64(random.next(upTo: 1_000_000))
            return event
        }
        let batch = ChangeEventBatch(events: events)
        let json = [UInt8](try WireCoding.makeEncoder().encode(batch))
        expectReadAsJSONDecoderReads(damagedCopiesOf: json, random: &random, comparing: \.events) { try ChangeEventBatch(decodingJSON: $0) }
    }

    @Test("Web Push keys are read from a subscription's stored JSON, as jsonb prints it or as JSONEncoder writes it")
    func webPushKeys() throws {
        let keys = WebPushKeys(p256dh: "BPk-_x", auth: "a1\"q")
        for json in [Data(#"{"auth": "a1\"q", "p256dh": "BPk-_x"}"#.utf8), try WireCoding.makeEncoder().encode(keys)] {
            #expect(try WebPushKeys(decodingJSON: json) == keys)
        }
        #expect(throws: JSONReadError.self) { try WebPushKeys(decodingJSON: Data(#"{"auth": "a1"}"#.utf8)) }
    }

    @Test("errors name the path and the byte offset")
    func errorsNameThePath() throws {
        let document = Self.event(with: #""content":{"priority":"high","expirationDateTime":"2026-01-31T12:00:00Z","payload":{"visualContent":{"title":7}}}"#)
        let error = try #require(throws: JSONReadError.self) { try ChangeEventBatch(decodingJSON: Data(document.utf8)) }
        #expect(error.path == "events[0].content.payload.visualContent.title")
        #expect(Array(document.utf8)[error.offset] == UInt8(ascii: "7"))
        let missing = try #require(throws: JSONReadError.self) {
            try PushJobBatch(decodingJSON: Data(#"{"groups":[{"appId":"a","targets":[{"pushId":"0e0b5f3c-9a57-4a8e-8f8b-2b9a0c5d6e7f"}]}]}"#.utf8))
        }
        #expect(missing.path == "groups[0].targets[0]")
        #expect(missing.message.contains("subscriptionId"))
    }

    /// A batch of one valid event, with `members` added after its own (a later repeated key does not count).
    static func event(with members: String) -> String {
        guard members.hasPrefix("\"") else { return members }
        return #"{"events":[{"appId":"a","userId":"u","sequence":1,"kind":"created","notificationId":"0e0b5f3c-9a57-4a8e-8f8b-2b9a0c5d6e7f","readState":"unread","userActionState":"noInteraction","unreadCount":3,"changedAt":"2026-01-31T12:00:00.123Z","#
            + members + "}]}"
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
        let push = flip() ? PushOptions(sound: flip() ? text() : nil, category: flip() ? text() : nil, threadId: flip() ? text() : nil, data: data) : nil
        return NotificationContent(
            appNotificationId: flip() ? text() : nil, groupName: flip() ? text() : nil, priority: pick(NotificationPriority.allCases),
            expirationDateTime: date(), displayTimeToLive: flip() ? next(upTo: 100_000) - 10 : nil,
            platformTypes: flip() ? (0..<next(upTo: 4)).map { _ in pick(Platform.allCases) } : nil,
            payload: NotificationPayload(rawContent: flip() ? text() : nil, visualContent: visual), push: push)
    }

    mutating func changeEvent() -> ChangeEvent {
        ChangeEvent(
            appId: text(), userId: text(), sequence: pick([0, 1, 7, Int64.max, Int64.min, -1, Int64(next(upTo: 1_000_000))]),
            kind: pick(ChangeKind.allCases), notificationId: UUID(), content: flip() ? content() : nil, readState: pick(ReadState.allCases),
            userActionState: pick(UserActionState.allCases), originSubscriptionId: flip() ? UUID() : nil, unreadCount: next(upTo: 1000),
            changedAt: date(), eventSource: flip() ? text() : nil, devicesVersion: flip() ? pick([0, 1, Int64.max]) : nil)
    }

    /// A job that differs from `job` only in its device.
    mutating func device(of job: PushJob) -> PushJob {
        var device = job
        device.pushId = UUID()
        device.subscriptionId = UUID()
        device.deviceToken = text()
        device.keys = flip() ? WebPushKeys(p256dh: text(), auth: text()) : nil
        return device
    }

    mutating func pushJob() -> PushJob {
        PushJob(
            pushId: UUID(), appId: text(), subscriptionId: UUID(), platform: pick(Platform.allCases), deviceToken: text(), notificationId: UUID(),
            sequence: pick([0, 7, Int64.max, Int64.min]), kind: pick(ChangeKind.allCases), isAlert: flip(), priority: pick(NotificationPriority.allCases),
            expiration: date(), collapseId: text(), payload: text(), attempt: next(upTo: 10), keys: flip() ? WebPushKeys(p256dh: text(), auth: text()) : nil)
    }
}
