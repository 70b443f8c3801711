import Foundation
import NotifyJSON
import NotifyModels
import Testing

/// `NotificationRequest(reading:)`, which ingest reads every published notification with, reads what JSONDecoder
/// reads: the same request from the same document, and an error naming the field wherever JSONDecoder refuses one.
@Suite("Publish request decoding")
struct NotificationRequestDecodingTests {
    private static func read(_ document: some ContiguousBytes) throws -> NotificationRequest {
        try JSONReader.read(document) { try NotificationRequest(reading: &$0) }
    }

    @Test("500 varied requests, written by JSONEncoder, read to the same request as JSONDecoder reads")
    func requestsRoundTrip() throws {
        var random = SeededRandom(seed: 11)
        for _ in 0..<500 {
            let request = random.notificationRequest()
            let json = try WireCoding.makeEncoder().encode(request)
            #expect(try Self.read(json) == request)
            #expect(try WireCoding.makeDecoder().decode(NotificationRequest.self, from: json) == request)
        }
    }

    @Test("requests at the edges are read as JSONDecoder reads them", arguments: [
        "{}", "[]", "null", "7", #""text""#, #"{"userId":null}"#, #"{"userId":5}"#, #"{"userId":"u","userId":"v"}"#,
        #"{"userId":null,"userId":"later"}"#, #"{"userId":"u","unknown":{"deep":[1,{"x":null}]}}"#, #"{"us\u0065rId":"escaped"}"#,
        #"{"priority":"high"}"#, #"{"priority":"urgent"}"#, #"{"priority":"High"}"#, #"{"priority":null}"#, #"{"priority":1}"#,
        #"{"expirationDateTime":"2026-01-31T12:00:00Z"}"#, #"{"expirationDateTime":"2026-01-31T12:00:00.123456789Z"}"#,
        #"{"expirationDateTime":"2026-01-31T12:00:00+02:00"}"#, #"{"expirationDateTime":"2026-02-30T12:00:00Z"}"#,
        #"{"expirationDateTime":"tomorrow"}"#, #"{"expirationDateTime":1769860800}"#,
        #"{"displayTimeToLive":60}"#, #"{"displayTimeToLive":60.0}"#, #"{"displayTimeToLive":6e1}"#, #"{"displayTimeToLive":60.5}"#,
        #"{"displayTimeToLive":"60"}"#, #"{"displayTimeToLive":-1}"#, #"{"displayTimeToLive":99999999999999999999}"#,
        #"{"targetPolicy":{}}"#, #"{"targetPolicy":null}"#, #"{"targetPolicy":{"platformTypes":null}}"#,
        #"{"targetPolicy":{"platformTypes":["apns","apns-voip","fcm","wns","webpush"]}}"#, #"{"targetPolicy":{"platformTypes":["telegraph"]}}"#,
        #"{"targetPolicy":{"platformTypes":"apns"}}"#, #"{"targetPolicy":[]}"#,
        #"{"payload":{}}"#, #"{"payload":{"rawContent":"r","visualContent":{"title":"t","body":"b"}}}"#,
        #"{"payload":{"visualContent":{"title":7}}}"#, #"{"payload":{"visualContent":null}}"#, #"{"payload":"text"}"#,
        #"{"push":{"sound":"s","category":"c","threadId":"t","data":{"a":[1,2.5,-0,"x",true,null,{"b":{}}],"a":7,"c":1e-320,"e":0.1}}}"#,
        #"{"push":{"data":{"c":1e-400}}}"#, #"{"push":{"data":{"c":1.8e309}}}"#, #"{"push":{"data":[]}}"#, #"{"push":{"data":null}}"#,
        #"{"push":{"title":"hey ana","body":"alert"}}"#, #"{"push":{"title":7}}"#, #"{"push":{"title":null,"body":"b"}}"#,
        #"{"push":{"url":"myapp://orders/42","androidChannelId":"orders"}}"#, #"{"push":{"url":7}}"#, #"{"push":{"androidChannelId":["o"]}}"#,
        #"{"eventSource":"s","pushRecipientsOnly":true,"recipients":[{"userId":"a","push":{"title":"hey a","body":"b"}},{"userId":"c"}]}"#,
        #"{"pushRecipientsOnly":"yes"}"#, #"{"pushRecipientsOnly":null}"#,
        #"{"eventSource":"s","where":{"team":"red","level":3,"lead":true}}"#, #"{"where":"red"}"#, #"{"where":null}"#, #"{"where":[]}"#,
        #"{"push":{"data":{"s":"\q"}}}"#, #"{"push":{"sound":["s"]}}"#, #"{"userId":"\ud83d\ude00 \u00e9"}"#, #"{"userId":"\ud83d"}"#,
        "\u{FEFF}{\"userId\":\"bom\"}", #"{"userId":"u",}"#, #"{"userId":"u"} x"#, #"{"userId":"u""#, "",
    ])
    func edgeCases(document: String) {
        let data = Data(document.utf8)
        let expected = try? WireCoding.makeDecoder().decode(NotificationRequest.self, from: data)
        let decoded = Result { try Self.read(data) }
        #expect(expected == (try? decoded.get()), "JSONDecoder: \(String(describing: expected)), ours: \(decoded)")
        if case .failure(let error) = decoded { #expect(error is JSONReadError) }
    }

    @Test("every prefix of a request, and 20,000 requests with bytes changed, inserted or removed, are read as JSONDecoder reads them")
    func damagedDocuments() throws {
        var random = SeededRandom(seed: 12)
        var request = random.notificationRequest()
        request.displayTimeToLive = 3600
        let json = [UInt8](try WireCoding.makeEncoder().encode(request))
        expectReadAsJSONDecoderReads(damagedCopiesOf: json, random: &random, comparing: { $0 }) { try Self.read($0) }
    }

    @Test("a field of the wrong type or value is named by its path")
    func errorsNameTheField() throws {
        let cases = [
            (#"{"userId":5}"#, "userId"), (#"{"priority":"urgent"}"#, "priority"),
            (#"{"payload":{"visualContent":{"title":7}}}"#, "payload.visualContent.title"),
            (#"{"targetPolicy":{"platformTypes":["apns","telegraph"]}}"#, "targetPolicy.platformTypes[1]"),
            (#"{"expirationDateTime":"tomorrow"}"#, "expirationDateTime"),
        ]
        for (document, field) in cases {
            let error = try #require(throws: JSONReadError.self) { try Self.read(Data(document.utf8)) }
            #expect(error.path == field, "\(document)")
        }
    }
}

extension SeededRandom {
    mutating func notificationRequest() -> NotificationRequest {
        let content = content()
        return NotificationRequest(
            userId: flip() ? text() : nil, subscriptionId: flip() ? text() : nil, eventSource: flip() ? text() : nil,
            appNotificationId: content.appNotificationId, groupName: content.groupName, priority: flip() ? content.priority : nil,
            expirationDateTime: flip() ? content.expirationDateTime : nil, displayTimeToLive: content.displayTimeToLive,
            targetPolicy: flip() ? TargetPolicy(platformTypes: content.platformTypes) : nil, payload: flip() ? content.payload : nil,
            push: content.push)
    }
}
