import Foundation
import NotifyModels
import Testing

@testable import IngestCore

/// The decoder of request bodies reads what JSONDecoder reads, and names the path of a number that does not fit.
@Suite struct RequestBodyDecoderTests {
    private struct Body: Decodable, Equatable {
        struct Limits: Decodable, Equatable {
            var small: Int8?
            var counts: [Int]?
        }

        var name: String
        var at: Date?
        var limits: Limits?
        var tags: [String: Int]?
        var ratio: Double?
    }

    private func refusal(_ json: String) -> APIFailure? {
        do {
            _ = try JSONResponse.decode(Body.self, from: Data(json.utf8))
            return nil
        } catch {
            return error
        }
    }

    @Test("a fraction or an out-of-range number where an integer is expected is invalid_field at its path", arguments: [
        (#"{"name":"a","limits":{"small":1.5}}"#, "limits.small"),
        (#"{"name":"a","limits":{"small":300}}"#, "limits.small"),
        (#"{"name":"a","limits":{"counts":[1,2,3.25]}}"#, "limits.counts[2]"),
        (#"{"name":"a","tags":{"x":1,"y":1e40}}"#, "tags.y"),
        (#"{"name":"a","limits":{"counts":[1,"2"]}}"#, "limits.counts[1]"),
    ])
    func numbersAreNamed(json: String, field: String) throws {
        let failure = try #require(refusal(json))
        #expect(failure.status == .badRequest)
        #expect(failure.body.error.code == "invalid_field" && failure.body.error.field == field, "\(failure.body)")
    }

    @Test("what JSONDecoder reads is read the same: timestamps by the wire's rules, whole numbers written with a fraction, nested values")
    func readsWhatJSONDecoderReads() throws {
        let json = #"{"name":"a","at":"2026-01-31T12:00:00.250Z","limits":{"small":-128,"counts":[1,2.0,3e2]},"tags":{"x":7},"ratio":0.5}"#
        let read = try JSONResponse.decode(Body.self, from: Data(json.utf8))
        #expect(read == (try WireCoding.makeDecoder().decode(Body.self, from: Data(json.utf8))))
        #expect(read.limits?.counts == [1, 2, 300] && read.tags == ["x": 7] && read.ratio == 0.5)
        #expect(read.at == WireCoding.parseTimestamp("2026-01-31T12:00:00.250Z"))
    }

    @Test("a missing field, a wrong timestamp and a body that is not JSON are answered as before")
    func otherRefusalsAreUnchanged() throws {
        let missing = try #require(refusal(#"{"limits":{}}"#))
        #expect(missing.body.error.code == "missing_field" && missing.body.error.field == "name", "\(missing.body)")
        let missingNested = try #require(refusal(#"{"name":"a","limits":{"counts":[1]},"tags":{"x":null}}"#))
        #expect(missingNested.body.error.code == "invalid_field" && missingNested.body.error.field == "tags.x", "\(missingNested.body)")
        let timestamp = try #require(refusal(#"{"name":"a","at":"yesterday"}"#))
        #expect(timestamp.body.error.code == "invalid_field" && timestamp.body.error.field == "at", "\(timestamp.body)")
        let broken = try #require(refusal(#"{"name":"a","limits":{"small":1"#))
        #expect(broken.body.error.code == "invalid_json" && broken.body.error.field == nil, "\(broken.body)")
    }
}
