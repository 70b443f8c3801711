import NIOCore
import NIOHTTP2
import NotifyAPNsCore

/// What an `APNsConnection` tells the pool that owns it, on the connection's event loop.
protocol APNsConnectionDelegate: AnyObject {
    /// The connection may take more requests: it became ready, streams finished, or the server changed its limit.
    func connectionMayTakeStreams(_ connection: APNsConnection)
    /// The connection takes no new requests (GOAWAY, stream ids used up, or closing); its open streams carry on.
    func connectionStoppedTakingStreams(_ connection: APNsConnection)
    /// The connection is closed and its streams answered. `failure` is set when it never became ready.
    func connectionClosed(_ connection: APNsConnection, neverReady failure: APNsTransportError?)
}

/// One HTTP/2 connection to APNs: the channel handler after `NIOHTTP2Handler`, with no stream channels. A request is
/// two frames written on a new stream id (HEADERS, then DATA with END_STREAM), and every request started in one
/// event-loop tick goes out with a single flush; answers are matched to their request by stream id.
///
/// The connection is ready once the server's first SETTINGS arrived, and then takes as many requests at once as the
/// server's SETTINGS_MAX_CONCURRENT_STREAMS allows. After GOAWAY it stops taking requests, answers those the server
/// did not take `.goAway` (safe to send again), lets the others finish, and closes.
final class APNsConnection: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    /// Most streams used at once, whatever the server allows (Apple allows about 1,000): NIOHTTP2 finds a stream's
    /// state by a linear scan of the open ones, so a connection with 1,000 open costs a third more CPU per push than
    /// four with 100 each, and four with 100 about 5 % more than four with 50 (at both ends, in a broadcast). Fewer
    /// than about 32 costs more again: each flush then carries fewer requests.
    static let maximumConcurrentStreams = 50
    /// Error bodies kept up to this size, like the 64 KiB AsyncHTTPClient collected.
    static let maximumBodySize = 64 * 1024
    /// The inbound connection flow-control window kept open (HTTP/2's initial one).
    private static let connectionWindow = 65535

    private enum State {
        /// TCP, TLS and the server's first SETTINGS.
        case connecting
        /// Taking requests.
        case ready
        /// Finishing its open streams, then closing.
        case draining
        /// Closed by us, waiting for the channel to go.
        case closing
        case closed
    }

    /// A request on the wire, and what came back so far.
    private struct OpenStream {
        let slot: APNsAnswerSlot
        /// A full request timeout from the moment the request was written.
        let deadline: NIODeadline
        var status: Int?
        var retryAfter: String?
        /// Made on the first DATA frame: a 200 has none.
        var body: ByteBuffer?
    }

    private let endpoint: String
    private let connectTimeout: TimeAmount
    /// Kept until the connection closes, so a pool being closed lives until its last connection is gone.
    private var delegate: (any APNsConnectionDelegate)?
    private var state = State.connecting
    private var context: ChannelHandlerContext?
    private var channelWasActive = false
    private var connectTimer: Scheduled<Void>?
    /// Why the connection is closing, for the requests it still holds.
    private var closeReason: APNsTransportError?
    private var streams: [HTTP2StreamID: OpenStream] = [:]
    private var nextStreamID = 1
    private var streamLimit = APNsConnection.maximumConcurrentStreams
    private var flushScheduled = false

    init(endpoint: APNsTransportEndpoint, connectTimeout: TimeAmount, delegate: any APNsConnectionDelegate) {
        self.endpoint = endpoint.description
        self.connectTimeout = connectTimeout
        self.delegate = delegate
    }

    var isConnecting: Bool { state == .connecting }

    /// How many more requests the connection takes now.
    var freeStreams: Int { state == .ready ? max(streamLimit - streams.count, 0) : 0 }

    var hasOpenStreams: Bool { !streams.isEmpty }

    /// Writes the request as a new stream; the flush follows at the end of this event-loop tick.
    /// Only called while `freeStreams > 0`.
    func start(_ request: APNsTransportRequest, answeringInto slot: APNsAnswerSlot) {
        guard state == .ready, let context else {
            slot.fail(closeReason ?? .connectionClosed(endpoint: endpoint, underlying: nil))
            return
        }
        let streamID = HTTP2StreamID(nextStreamID)
        nextStreamID += 2
        streams[streamID] = OpenStream(slot: slot, deadline: slot.answerDeadline(writtenAt: .now()))
        context.write(wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .headers(request.headers))), promise: nil)
        let body = HTTP2Frame.FramePayload.Data(data: .byteBuffer(request.body), endStream: true)
        context.write(wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .data(body))), promise: nil)
        scheduleFlush()
        if nextStreamID > Int(Int32.max) {
            stopTakingStreams()
        }
    }

    /// Answers `.timedOut` to the requests whose deadline passed, resetting their streams (a late answer is ignored).
    func expireStreams(now: NIODeadline) {
        let expired = streams.filter { $0.value.deadline <= now }
        guard !expired.isEmpty else { return }
        for (streamID, stream) in expired {
            streams[streamID] = nil
            stream.slot.fail(.timedOut)
            context?.write(wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .rstStream(.cancel))), promise: nil)
        }
        scheduleFlush()
        streamsFinished()
    }

    /// Takes no new requests, lets the open ones finish, then closes (at once if still connecting).
    func closeWhenIdle() {
        switch state {
        case .connecting:
            closeReason = .poolClosed
            context?.close(promise: nil)
        case .ready:
            stopTakingStreams()
            closeIfDrained()
        case .draining, .closing, .closed:
            break
        }
    }

    /// The channel never became active: TCP failed, or the connect timeout closed it first.
    func connectFailed(_ error: any Error) {
        becomeClosed(reason: closeReason ?? .connectFailed(endpoint: endpoint, underlying: String(describing: error)))
    }

    // MARK: Channel events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        connectTimer = context.eventLoop.assumeIsolated().scheduleTask(in: connectTimeout) { [weak self] in
            self?.connectTimedOut()
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        // Before the channel was active, the failed connect reports why (connectFailed).
        if channelWasActive {
            becomeClosed(reason: closeReason ?? .connectionClosed(endpoint: endpoint, underlying: nil))
        }
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        channelWasActive = true
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        becomeClosed(reason: closeReason ?? .connectionClosed(endpoint: endpoint, underlying: nil))
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case .headers(let headers):
            receivedHeaders(headers, streamID: frame.streamID)
        case .data(let data):
            receivedData(data, streamID: frame.streamID)
        case .settings(.settings(let settings)):
            receivedSettings(settings)
        case .goAway(let lastStreamID, let errorCode, _):
            receivedGoAway(lastStreamID: lastStreamID, errorCode: errorCode)
        default:
            // PING and SETTINGS acks are NIOHTTP2Handler's; RST_STREAM arrives as a StreamClosedEvent.
            break
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case let window as NIOHTTP2WindowUpdatedEvent:
            if window.streamID == .rootStream, let size = window.inboundWindowSize, size < Self.connectionWindow / 2 {
                let increment = Self.connectionWindow - size
                context.write(wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: increment))), promise: nil)
                scheduleFlush()
            }
        case let closed as StreamClosedEvent:
            // Streams answered in full are gone already; this one was reset, or dropped by GOAWAY.
            if let stream = streams.removeValue(forKey: closed.streamID) {
                stream.slot.fail(.streamReset(String(reflecting: closed.reason ?? .noError)))
                streamsFinished()
            }
        default:
            break
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let streamError = error as? NIOHTTP2Errors.StreamError {
            if let stream = streams.removeValue(forKey: streamError.streamID) {
                stream.slot.fail(.streamReset(String(describing: streamError.baseError)))
                streamsFinished()
            }
            return
        }
        if closeReason == nil {
            closeReason = state == .connecting
                ? .connectFailed(endpoint: endpoint, underlying: String(describing: error))
                : .connectionClosed(endpoint: endpoint, underlying: String(describing: error))
        }
        context.close(promise: nil)
    }

    // MARK: Frames

    private func receivedSettings(_ settings: HTTP2Settings) {
        for setting in settings where setting.parameter == .maxConcurrentStreams {
            streamLimit = min(setting.value, Self.maximumConcurrentStreams)
        }
        if state == .connecting {
            state = .ready
            connectTimer?.cancel()
            connectTimer = nil
        }
        if state == .ready {
            delegate?.connectionMayTakeStreams(self)
        }
    }

    private func receivedHeaders(_ payload: HTTP2Frame.FramePayload.Headers, streamID: HTTP2StreamID) {
        guard let index = streams.index(forKey: streamID) else { return }  // reset by us: a late answer
        if streams.values[index].status == nil {
            guard let status = payload.headers.first(name: ":status").flatMap({ Int($0) }) else {
                fail(streamID, .malformedResponse("no :status"))
                return
            }
            if (100..<200).contains(status) { return }  // informational: the answer follows
            streams.values[index].status = status
            streams.values[index].retryAfter = payload.headers.first(name: "retry-after")
        }
        if payload.endStream {
            complete(at: index)
        }
    }

    private func receivedData(_ payload: HTTP2Frame.FramePayload.Data, streamID: HTTP2StreamID) {
        guard let index = streams.index(forKey: streamID) else { return }
        if case .byteBuffer(var bytes) = payload.data, bytes.readableBytes > 0 {
            guard (streams.values[index].body?.readableBytes ?? 0) + bytes.readableBytes <= Self.maximumBodySize else {
                fail(streamID, .malformedResponse("body over \(Self.maximumBodySize) bytes"))
                return
            }
            streams.values[index].body.setOrWriteBuffer(&bytes)
        }
        if payload.endStream {
            complete(at: index)
        }
    }

    private func receivedGoAway(lastStreamID: HTTP2StreamID, errorCode: HTTP2ErrorCode) {
        let untaken = streams.keys.filter { $0 > lastStreamID }
        for streamID in untaken {
            streams.removeValue(forKey: streamID)?.slot.fail(.goAway(errorCode))
        }
        if state == .connecting {
            closeReason = .connectFailed(endpoint: endpoint, underlying: "GOAWAY \(String(reflecting: errorCode))")
            context?.close(promise: nil)
            return
        }
        stopTakingStreams()
        closeIfDrained()
    }

    // MARK: Helpers

    private func complete(at index: Dictionary<HTTP2StreamID, OpenStream>.Index) {
        let (streamID, stream) = streams.remove(at: index)
        guard let status = stream.status else {
            stream.slot.fail(.malformedResponse("stream \(streamID) ended without headers"))
            streamsFinished()
            return
        }
        stream.slot.succeed(APNsTransportResponse(status: status, retryAfter: stream.retryAfter, body: stream.body))
        streamsFinished()
    }

    /// Answers the request with `error` and resets its stream.
    private func fail(_ streamID: HTTP2StreamID, _ error: APNsTransportError) {
        guard let stream = streams.removeValue(forKey: streamID) else { return }
        stream.slot.fail(error)
        context?.write(wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .rstStream(.cancel))), promise: nil)
        scheduleFlush()
        streamsFinished()
    }

    private func streamsFinished() {
        switch state {
        case .ready:
            delegate?.connectionMayTakeStreams(self)
        case .draining:
            closeIfDrained()
        case .connecting, .closing, .closed:
            break
        }
    }

    private func stopTakingStreams() {
        guard state == .ready else { return }
        state = .draining
        delegate?.connectionStoppedTakingStreams(self)
    }

    /// Closes a draining connection without open streams, saying goodbye with GOAWAY first.
    private func closeIfDrained() {
        guard state == .draining, streams.isEmpty, let context else { return }
        state = .closing
        context.write(wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: .rootStream, errorCode: .noError, opaqueData: nil))), promise: nil)
        context.flush()
        context.close(promise: nil)
    }

    private func connectTimedOut() {
        guard state == .connecting else { return }
        closeReason = .connectTimeout(endpoint: endpoint)
        context?.close(promise: nil)
    }

    /// Flushes once, after everything else this event-loop tick writes.
    private func scheduleFlush() {
        guard !flushScheduled, let context else { return }
        flushScheduled = true
        context.eventLoop.assumeIsolated().execute {
            self.flushScheduled = false
            self.context?.flush()
        }
    }

    /// Answers every open request with `reason` and tells the pool, once.
    private func becomeClosed(reason: APNsTransportError) {
        guard state != .closed else { return }
        let wasReady = state != .connecting
        state = .closed
        connectTimer?.cancel()
        connectTimer = nil
        let open = streams
        streams = [:]
        for stream in open.values {
            stream.slot.fail(reason)
        }
        let delegate = delegate
        self.delegate = nil
        delegate?.connectionClosed(self, neverReady: wasReady ? nil : reason)
    }
}

@available(*, unavailable)
extension APNsConnection: Sendable {}
