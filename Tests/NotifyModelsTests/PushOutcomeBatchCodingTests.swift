import Foundation
import NotifyModels
import Testing

/// The hand-written push-outcome coding says what the Codable one says, and reads what JSONDecoder reads.
@Suite("Push-outcome batch coding")
struct PushOutcomeBatchCodingTests {
    @Test("outcomes written by hand or by JSONEncoder decode, by hand or by JSONDecoder, to the same outcomes, for 300 varied batches")
    func roundTrips() throws {
        var random = SeededRandom(seed: 11)
        let batches = [Self.everyCase(&random)] + (0..<300).map { _ in
            PushOutcomeBatch(outcomes: (0..<random.next(upTo: 5)).map { _ in random.pushOutcome() })
        }
        for batch in batches {
            for json in [batch.encodedJSON(), try WireCoding.makeEncoder().encode(batch)] {
                #expect(try PushOutcomeBatch(decodingJSON: json).outcomes == batch.outcomes)
                #expect(try WireCoding.makeDecoder().decode(PushOutcomeBatch.self, from: json).outcomes == batch.outcomes)
            }
        }
    }

    @Test("the written document has JSONEncoder's keys and values (nil left out, same timestamps), UUIDs lowercase")
    func sameDocumentAsJSONEncoder() throws {
        var random = SeededRandom(seed: 12)
        for batch in [Self.everyCase(&random), PushOutcomeBatch(outcomes: [])] {
            let written = try Self.normalized(batch.encodedJSON())
            #expect(written == (try Self.normalized(WireCoding.makeEncoder().encode(batch))))
            let text = String(decoding: batch.encodedJSON(), as: UTF8.self)
            #expect(text.hasPrefix(#"{"outcomes":["#) && !text.contains("null"))
            #expect(batch.outcomes.allSatisfy { text.contains($0.pushId.uuidString.lowercased()) })
        }
    }

    @Test("documents from other senders, and damaged ones, are read as JSONDecoder reads them", arguments: [
        "", "{}", "null", #"{"outcomes":null}"#, #"{"outcomes":{}}"#, #"{"outcomes":[]"#, #"{"outcomes":[],"outcomes":null}"#,
        #"{"outcomes":[],}"#, #"{"extra":{"a":[1,"x"]},"outcomes":[]}"#, "\u{FEFF} {\"outcomes\" : [ ] }\n",
    ] + [
        // Members added to a valid outcome without the optional keys (see `outcome(with:)`).
        #""status":410,"reason":"Unregistered","invalidSince":"2026-01-31T11:00:00Z""#, #""status":null,"reason":null,"invalidSince":null"#,
        #""status":null,"status":410"#, #""reason":"r\u00e9ason \"q\" \\ \/ \n 😀","reason":"later""#, #""status":410.0"#, #""status":1.5"#,
        #""status":"410""#, #""status":9223372036854775808"#, #""reason":7"#, #""invalidSince":"yesterday""#,
        #""invalidSince":"2026-01-31T12:00:00.5+02:00""#, #""invalidSince":1"#, #""appId":null"#, #""appId":"second""#,
        #""result":"tokenInvalid""#, #""result":"TokenInvalid""#, #""result":"lost""#, #""platform":"apns-voip""#, #""platform":"apnsVoip""#,
        #""pushId":"0E0B5F3C-9A57-4A8E-8F8B-2B9A0C5D6E7F""#, #""pushId":"0e0b5f3c9a574a8e8f8b2b9a0c5d6e7f""#, #""attempt":-1"#,
        #""sequence":-9223372036854775808"#, #""sequence":1e2"#, #""future":{"nested":[null,true,{"x":"\u0041"}]}"#, #""future":"\q""#,
        #""at":"2026-01-31T12:00:00.123456Z""#, #""at":"2026-02-30T12:00:00Z""#, #""\u0061t":"2026-01-31T12:00:00Z""#,
    ].map(Self.outcome(with:)) + [
        // A valid outcome without one of its required keys.
        #"{"outcomes":[{"appId":"a","subscriptionId":"5d1c2b3a-4e5f-4a6b-9c8d-7e6f5a4b3c2d","notificationId":"0e0b5f3c-9a57-4a8e-8f8b-2b9a0c5d6e7f","sequence":7,"platform":"fcm","result":"accepted","attempt":0,"at":"2026-01-31T12:00:00.123Z"}]}"#,
        #"{"outcomes":[{"pushId":"ceb392e5-ed83-5c16-bc8c-271bb850d090","appId":"a","subscriptionId":"5d1c2b3a-4e5f-4a6b-9c8d-7e6f5a4b3c2d","notificationId":"0e0b5f3c-9a57-4a8e-8f8b-2b9a0c5d6e7f","sequence":7,"platform":"fcm","result":"accepted","attempt":0}]}"#,
    ])
    func otherDocuments(document: String) {
        Self.expectSameAsJSONDecoder(Array(document.utf8))
    }

    @Test("an outcome from an older sender, without the optional keys or with them null, and with keys unknown here, is read")
    func olderSenders() throws {
        for members in [#""future":[1,{"a":null}]"#, #""status":null,"reason":null,"invalidSince":null"#] {
            let batch = try PushOutcomeBatch(decodingJSON: Data(Self.outcome(with: members).utf8))
            let outcome = try #require(batch.outcomes.first)
            #expect(outcome.status == nil && outcome.reason == nil && outcome.invalidSince == nil)
            #expect(outcome.result == .accepted && outcome.sequence == 7 && outcome.at == WireCoding.parseTimestamp("2026-01-31T12:00:00.123Z"))
        }
    }

    @Test("every prefix of a document, and 10,000 documents with bytes changed, inserted or removed, are refused or read as JSONDecoder reads them")
    func damagedDocuments() throws {
        var random = SeededRandom(seed: 13)
        // Integers below 2^53: JSONDecoder reads a larger one with a fraction through Decimal, which the reader refuses.
        let outcomes = (0..<3).map { _ in
            var outcome = random.pushOutcome()
            outcome.sequence = Int64(random.next(upTo: 1_000_000))
            outcome.status = random.flip() ? 410 : nil
            outcome.attempt = random.next(upTo: 10)
            return outcome
        }
        let json = [UInt8](PushOutcomeBatch(outcomes: outcomes).encodedJSON())
        for length in 0..<json.count {
            #expect(throws: JSONReadError.self, "the first \(length) bytes") { try PushOutcomeBatch(decodingJSON: Array(json[..<length])) }
        }
        for _ in 0..<10_000 { Self.expectSameAsJSONDecoder(random.damaged(json)) }
    }

    @Test("errors name the outcome and the key")
    func errorsNameThePath() throws {
        let missing = try #require(throws: JSONReadError.self) { try PushOutcomeBatch(decodingJSON: Data(#"{"outcomes":[{"appId":"a"}]}"#.utf8)) }
        #expect(missing.path == "outcomes[0]")
        #expect(missing.message.contains("pushId"))
        let document = Self.outcome(with: #""status":"410""#)
        let wrong = try #require(throws: JSONReadError.self) { try PushOutcomeBatch(decodingJSON: Data(document.utf8)) }
        #expect(wrong.path == "outcomes[0].status")
    }

    /// Both decoders refuse `bytes`, or both read the same outcomes; the hand-written one throws only `JSONReadError`.
    private static func expectSameAsJSONDecoder(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        let expected = try? WireCoding.makeDecoder().decode(PushOutcomeBatch.self, from: Data(bytes))
        let decoded = Result { try PushOutcomeBatch(decodingJSON: bytes) }
        #expect(expected?.outcomes == (try? decoded.get())?.outcomes, "\(String(decoding: bytes, as: UTF8.self)): ours \(decoded)",
                sourceLocation: sourceLocation)
        if case .failure(let error) = decoded { #expect(error is JSONReadError, sourceLocation: sourceLocation) }
    }

    /// A batch of one outcome without optional keys, with `members` added after its own (a later repeated key does not count).
    private static func outcome(with members: String) -> String {
        guard members.hasPrefix("\"") else { return members }
        return #"{"outcomes":[{"pushId":"ceb392e5-ed83-5c16-bc8c-271bb850d090","appId":"a","subscriptionId":"5d1c2b3a-4e5f-4a6b-9c8d-7e6f5a4b3c2d","notificationId":"0e0b5f3c-9a57-4a8e-8f8b-2b9a0c5d6e7f","sequence":7,"platform":"fcm","result":"accepted","attempt":0,"at":"2026-01-31T12:00:00.123Z","#
            + members + "}]}"
    }

    /// Every result on every platform, each optional present and absent.
    private static func everyCase(_ random: inout SeededRandom) -> PushOutcomeBatch {
        var outcomes: [PushOutcome] = []
        for result in PushOutcome.Result.allCases {
            for platform in Platform.allCases {
                for present in [true, false] {
                    var outcome = random.pushOutcome()
                    outcome.result = result
                    outcome.platform = platform
                    outcome.status = present ? 410 : nil
                    outcome.reason = present ? "Unregistered \"é\"\n" : nil
                    outcome.invalidSince = present ? random.date() : nil
                    outcomes.append(outcome)
                }
            }
        }
        return PushOutcomeBatch(outcomes: outcomes)
    }

    /// The document as values, with the UUIDs JSONEncoder writes uppercase lowercased.
    private static func normalized(_ json: Data) throws -> JSONValue {
        let value = try JSONReader.read(json) { try $0.readValue() }
        guard case .object(var batch) = value, case .array(let outcomes)? = batch["outcomes"] else { return value }
        batch["outcomes"] = .array(outcomes.map { outcome in
            guard case .object(var members) = outcome else { return outcome }
            for key in ["pushId", "subscriptionId", "notificationId"] {
                if case .string(let id)? = members[key] { members[key] = .string(id.lowercased()) }
            }
            return .object(members)
        })
        return .object(batch)
    }
}

extension SeededRandom {
    mutating func pushOutcome() -> PushOutcome {
        PushOutcome(
            pushId: UUID(), appId: text(), subscriptionId: UUID(), notificationId: UUID(),
            sequence: pick([0, 7, Int64.max, Int64.min, Int64(next(upTo: 1_000_000))]), platform: pick(Platform.allCases),
            result: pick(PushOutcome.Result.allCases), status: flip() ? pick([200, 400, 403, 410, 429, 500, 0, -1, Int.max]) : nil,
            reason: flip() ? text() : nil, attempt: pick([0, 1, 9, Int.max]), invalidSince: flip() ? date() : nil, at: date())
    }
}
