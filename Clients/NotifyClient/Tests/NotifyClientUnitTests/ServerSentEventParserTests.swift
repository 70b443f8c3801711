import Testing
import NotifyAPI

@Suite("Server-Sent Events parsing")
struct ServerSentEventParserTests {
    @Test("events split across reads, comments, CRLF and multi-line data")
    func parsesStream() {
        var parser = ServerSentEventParser()
        #expect(parser.feed(Array(": connected\n\nid: 7\nevent: cha".utf8)).isEmpty)
        #expect(parser.feed(Array("nge\ndata: {\"a\":1}\n".utf8)).isEmpty)
        let events = parser.feed(Array("\n: keep-alive\n\nid:8\r\ndata: one\r\ndata:two\r\n\r\n".utf8))
        #expect(events == [
            .init(id: "7", type: "change", data: #"{"a":1}"#),
            .init(id: "8", type: "message", data: "one\ntwo"),
        ])
    }
}
