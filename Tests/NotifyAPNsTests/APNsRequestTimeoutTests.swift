import NIOCore
import NIOEmbedded
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NotifyOutbound
import Testing

@testable import NotifyAPNs
@testable import NotifyAPNsCore

/// How long an APNs request may take: the wait for a free stream and the answer on the wire are timed apart, so a
/// request that waited long is not reset (and sent again by the retry) soon after it was written.
@Suite("APNs request timeouts")
struct APNsRequestTimeoutTests {
    private final class IgnoringDelegate: APNsConnectionDelegate {
        func connectionMayTakeStreams(_ connection: APNsConnection) {}
        func connectionStoppedTakingStreams(_ connection: APNsConnection) {}
        func connectionClosed(_ connection: APNsConnection, neverReady failure: APNsTransportError?) {}
        func connection(_ connection: APNsConnection, gaveBack requests: [APNsUnansweredRequest]) {}
    }

    @Test("a request written after waiting 9.5 s of its 10 s gets 10 s on the wire; past them its stream is reset and it times out")
    func writtenRequestGetsItsOwnTimeout() async throws {
        let endpoint = try APNsTransportEndpoint(baseURL: "https://localhost:18443")
        var outbound: [HTTP2Frame.FramePayload] = []
        var openAfterBatchDeadline = false
        let answers = await withCheckedContinuation { continuation in
            let channel = EmbeddedChannel()
            let connection = APNsConnection(endpoint: endpoint, connectTimeout: .seconds(5), delegate: IgnoringDelegate())
            try! channel.pipeline.syncOperations.addHandler(connection)
            try! channel.writeInbound(HTTP2Frame(streamID: .rootStream, payload: .settings(.settings([]))))

            let written = NIODeadline.now()
            let batch = APNsRequestBatch(count: 1, started: written - .milliseconds(9_500), timeout: .seconds(10), continuation: continuation)
            let request = APNsTransportRequest(headers: .init(headers: HPACKHeaders([(":method", "POST")])), body: ByteBuffer(string: "{}"))
            connection.start(request, answeringInto: APNsAnswerSlot(batch: batch, index: 0))
            connection.expireStreams(now: written + .seconds(5))
            openAfterBatchDeadline = connection.hasOpenStreams
            connection.expireStreams(now: written + .milliseconds(10_001))
            channel.embeddedEventLoop.run()
            while let frame = try! channel.readOutbound(as: HTTP2Frame.self) {
                outbound.append(frame.payload)
            }
        }
        #expect(openAfterBatchDeadline, "reset 5 s after it was written, because it had waited")
        guard case .failure(.timedOut) = answers[0].result else {
            Issue.record("answered \(answers[0].result), not timedOut")
            return
        }
        #expect(outbound.count == 3, "HEADERS, DATA and then RST_STREAM")
        if case .rstStream(let code) = outbound.last {
            #expect(code == .cancel)
        } else {
            Issue.record("the last frame written was \(String(describing: outbound.last)), not RST_STREAM")
        }
    }

    @Test("a request that found no connection ready within its timeout fails unsent, so the retry cannot repeat it")
    func waitingRequestFailsUnsent() async throws {
        // Accepts TCP and never answers the TLS handshake: the pool's only connection stays connecting (5 s).
        let silentServer = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(silentServer.localAddress?.port)
        let pool = APNsConnectionPool(
            endpoint: try APNsTransportEndpoint(baseURL: "https://127.0.0.1:\(port)"), factory: try APNsConnectionFactory(
                trustedCAFile: nil, policy: OutboundPolicy(allowance: try OutboundAllowance(parsing: "127.0.0.1:\(port)"))),
            maximumConnections: 1, eventLoop: MultiThreadedEventLoopGroup.singleton.next())
        let request = APNsTransportRequest(headers: .init(headers: HPACKHeaders([(":method", "POST")])), body: ByteBuffer(string: "{}"))
        let answers = await pool.send([request], timeout: .milliseconds(200))
        try await pool.close().get()
        try await silentServer.close()
        guard case .failure(.notSent) = answers.first?.result else {
            Issue.record("answered \(String(describing: answers.first?.result)), not notSent")
            return
        }
    }
}
