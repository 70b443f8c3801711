import NIOCore
import NIOEmbedded
import NIOHPACK
import NIOHTTP2
import Testing

@testable import NotifyAPNs
@testable import NotifyAPNsCore

/// `APNsConnection` on an `EmbeddedChannel`: HTTP/2 frames in and out, no socket, no TLS.
@Suite("APNs connection, frame by frame")
struct APNsConnectionTests {
    /// Counts what the connection tells its pool, and answers what it gives back with the reason (as a pool does
    /// once a request was sent again as often as it may).
    private final class RecordingDelegate: APNsConnectionDelegate {
        var mayTakeStreams = 0
        var stoppedTakingStreams = 0
        var closed = 0
        /// Given back, and whether the connection had stopped taking streams by then.
        var givenBack: [(index: Int, afterStopping: Bool)] = []

        func connectionMayTakeStreams(_ connection: APNsConnection) { mayTakeStreams += 1 }
        func connectionStoppedTakingStreams(_ connection: APNsConnection) { stoppedTakingStreams += 1 }
        func connectionClosed(_ connection: APNsConnection, neverReady failure: APNsTransportError?) { closed += 1 }
        func connection(_ connection: APNsConnection, gaveBack requests: [APNsUnansweredRequest]) {
            for given in requests {
                givenBack.append((given.slot.index, connection.freeStreams == 0))
                given.slot.fail(given.reason)
            }
        }
    }

    private static let request = APNsTransportRequest(
        headers: .init(headers: HPACKHeaders([(":method", "POST"), (":path", "/3/device/abc")])), body: ByteBuffer(string: #"{"aps":{}}"#))

    /// A ready connection on an embedded channel (the server's first SETTINGS read, with `settings`).
    private static func readyConnection(
        settings: [HTTP2Setting] = [], delegate: RecordingDelegate
    ) throws -> (EmbeddedChannel, APNsConnection) {
        let channel = EmbeddedChannel()
        let connection = APNsConnection(
            endpoint: try APNsTransportEndpoint(baseURL: "https://localhost:1"), connectTimeout: .seconds(5), delegate: delegate)
        try channel.pipeline.syncOperations.addHandler(connection)
        try channel.writeInbound(HTTP2Frame(streamID: .rootStream, payload: .settings(.settings(settings))))
        return (channel, connection)
    }

    /// Sends `count` requests as one batch and answers with `respond` once they are written; the answers in request order.
    private static func send(
        _ count: Int, on connection: APNsConnection, channel: EmbeddedChannel, respond: ([HTTP2StreamID]) throws -> Void
    ) async throws -> [APNsTransportAnswer] {
        var failure: (any Error)?
        let answers = await withCheckedContinuation { continuation in
            let batch = APNsRequestBatch(count: count, started: .now(), timeout: .seconds(10), continuation: continuation)
            for index in 0..<count { connection.start(request, answeringInto: APNsAnswerSlot(batch: batch, index: index)) }
            channel.embeddedEventLoop.run()
            var streams: [HTTP2StreamID] = []
            while let frame = try? channel.readOutbound(as: HTTP2Frame.self) {
                if case .headers = frame.payload { streams.append(frame.streamID) }
            }
            do { try respond(streams) } catch { failure = error }
        }
        if let failure { throw failure }
        return answers
    }

    private static func status(_ status: Int, on stream: HTTP2StreamID, endStream: Bool = true, extra: [(String, String)] = []) -> HTTP2Frame {
        HTTP2Frame(streamID: stream, payload: .headers(.init(headers: HPACKHeaders([(":status", String(status))] + extra), endStream: endStream)))
    }

    @Test("a request is two frames on a new odd stream id, one flush for a batch, and each answer finds its request by stream id")
    func answersMatchTheirStreams() async throws {
        let delegate = RecordingDelegate()
        let (channel, connection) = try Self.readyConnection(delegate: delegate)
        #expect(delegate.mayTakeStreams == 1, "ready once the server's SETTINGS came")
        let answers = try await Self.send(3, on: connection, channel: channel) { streams in
            #expect(streams == [1, 3, 5])
            // Answered out of order: the second with an error body and Retry-After, then the others.
            try channel.writeInbound(Self.status(429, on: streams[1], endStream: false, extra: [("retry-after", "30")]))
            try channel.writeInbound(HTTP2Frame(
                streamID: streams[1], payload: .data(.init(data: .byteBuffer(ByteBuffer(string: #"{"reason":"TooManyRequests"}"#)), endStream: true))))
            try channel.writeInbound(Self.status(200, on: streams[2]))
            try channel.writeInbound(Self.status(200, on: streams[0]))
        }
        let statuses = answers.map { (try? $0.result.get())?.status }
        #expect(statuses == [200, 429, 200])
        let refused = try answers[1].result.get()
        #expect(refused.retryAfter == "30")
        #expect(refused.body.map { String(buffer: $0) } == #"{"reason":"TooManyRequests"}"#)
        #expect(!connection.hasOpenStreams)
    }

    @Test("no more streams at once than the server's SETTINGS_MAX_CONCURRENT_STREAMS, nor than our own limit of 50")
    func streamLimits() throws {
        let delegate = RecordingDelegate()
        let (_, limited) = try Self.readyConnection(settings: [HTTP2Setting(parameter: .maxConcurrentStreams, value: 7)], delegate: delegate)
        #expect(limited.freeStreams == 7)
        let (_, generous) = try Self.readyConnection(settings: [HTTP2Setting(parameter: .maxConcurrentStreams, value: 1_000)], delegate: delegate)
        #expect(generous.freeStreams == APNsConnection.maximumConcurrentStreams)
    }

    @Test("GOAWAY: no new streams at once; the requests the server did not take are given back in order (safe to send again), the others still get their answer")
    func goAwayAnswersWhatWasNotTaken() async throws {
        let delegate = RecordingDelegate()
        let (channel, connection) = try Self.readyConnection(delegate: delegate)
        let answers = try await Self.send(3, on: connection, channel: channel) { streams in
            try channel.writeInbound(HTTP2Frame(
                streamID: .rootStream, payload: .goAway(lastStreamID: streams[0], errorCode: .noError, opaqueData: nil)))
            #expect(connection.freeStreams == 0, "no new requests after GOAWAY")
            try channel.writeInbound(Self.status(200, on: streams[0]))
        }
        #expect((try? answers[0].result.get())?.status == 200)
        #expect(delegate.givenBack.map(\.index) == [1, 2])
        #expect(delegate.givenBack.allSatisfy { $0.afterStopping }, "given back before the connection stopped taking streams")
        for answer in answers.dropFirst() {
            guard case .failure(.goAway(.noError)) = answer.result else {
                Issue.record("answered \(answer.result), not goAway")
                continue
            }
        }
        #expect(delegate.stoppedTakingStreams == 1)
    }

    @Test("the connection closing gives back the requests without any answer yet, and answers connectionClosed to one half answered")
    func closeGivesBackOpenStreams() async throws {
        let delegate = RecordingDelegate()
        let (channel, connection) = try Self.readyConnection(delegate: delegate)
        let answers = try await Self.send(3, on: connection, channel: channel) { streams in
            try channel.writeInbound(Self.status(500, on: streams[1], endStream: false))
            channel.pipeline.fireChannelInactive()
        }
        #expect(delegate.givenBack.map(\.index) == [0, 2])
        for answer in answers {
            guard case .failure(.connectionClosed) = answer.result else {
                Issue.record("answered \(answer.result), not connectionClosed")
                continue
            }
        }
        #expect(delegate.closed == 1)
    }
}
