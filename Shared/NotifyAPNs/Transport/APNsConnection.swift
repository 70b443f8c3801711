import NIOCore
import NIOHTTP2
import NotifyAPNsCore

/// What an `APNsConnection` tells the pool that owns it, on the connection's event loop.
protocol APNsConnectionDelegate: AnyObject {
    /// The connection may take more requests: it became ready, streams finished, or the server changed its limit.
    func connectionMayTakeStreams(_ connection: APNsConnection)
    /// The connection takes no new requests (GOAWAY, stream ids used up, or closing); its open streams carry on.
    func connectionStoppedTakingStreams(_ connection: APNsConnection)
    /// The connection is closed and its streams answered or given back. `failure` is set when it never became ready.
    func connectionClosed(_ connection: APNsConnection, neverReady failure: APNsTransportError?)
    /// Requests the connection gives back unanswered, to be sent again on another connection: the server did not
    /// take them (above a GOAWAY's last stream id, or refused), or the connection was lost before any answer.
    /// Told after the connection stopped taking streams.
    func connection(_ connection: APNsConnection, gaveBack requests: [APNsUnansweredRequest])
}

/// A request an `APNsConnection` wrote but got no answer to, and why.
struct APNsUnansweredRequest {
    let request: APNsTransportRequest
    let slot: APNsAnswerSlot
    /// The answer if it is not sent again.
    let reason: APNsTransportError
}

/// One HTTP/2 connection to APNs: the channel handler after `NIOHTTP2Handler`, with no stream channels. A request is
/// two frames written on a new stream id (HEADERS, then DATA with END_STREAM), and every request started in one
/// event-loop tick goes out with a single flush; answers are matched to their request by stream id.
///
/// The connection is ready once the server's first SETTINGS arrived, and then takes as many requests at once as the
/// server's SETTINGS_MAX_CONCURRENT_STREAMS allows. After GOAWAY it stops taking requests at once, gives back those
/// the server did not take (safe to send again), lets the others finish, and closes. Closed with requests that had no
/// answer yet, it gives them back too: a push repeated carries the same apns-id and apns-collapse-id.
///
/// A dead connection (the server gone without a FIN) is found by PING: sent when nothing was read for 2 seconds
/// with requests open, or for 30 seconds without; a connection that reads nothing within 3 seconds of its PING is
/// closed, well within a request's timeout.
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
    /// Nothing read for this long with requests open: PING.
    static let busyPingDelay = TimeAmount.seconds(2)
    /// Nothing read for this long without requests: PING, which also keeps middleboxes from forgetting the connection.
    static let idlePingDelay = TimeAmount.seconds(30)
    /// Nothing read for this long after a PING: the connection is dead.
    static let pingTimeout = TimeAmount.seconds(3)

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
        /// Kept to be given back if the server does not answer it.
        let request: APNsTransportRequest
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
    /// When bytes last came from the server.
    private var lastRead = NIODeadline.now()
    /// When the PING not answered yet was sent.
    private var pingSentAt: NIODeadline?
    private var healthCheck: Scheduled<Void>?

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
        let now = NIODeadline.now()
        streams[streamID] = OpenStream(request: request, slot: slot, deadline: slot.answerDeadline(writtenAt: now))
        if streams.count == 1 {
            // The first request after a quiet spell: check sooner than an idle connection would.
            scheduleHealthCheck(at: max(lastRead + Self.busyPingDelay, now))
        }
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

    func channelReadComplete(context: ChannelHandlerContext) {
        lastRead = .now()
        pingSentAt = nil
        context.fireChannelReadComplete()
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
                let reason = APNsTransportError.streamReset(String(reflecting: closed.reason ?? .noError))
                if closed.reason == .refusedStream {
                    // Refused: the server did not act on it (RFC 9113, 8.7).
                    delegate?.connection(self, gaveBack: [APNsUnansweredRequest(request: stream.request, slot: stream.slot, reason: reason)])
                } else {
                    stream.slot.fail(reason)
                }
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
            scheduleHealthCheck(at: lastRead + Self.idlePingDelay)
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
        if state == .connecting {
            closeReason = .connectFailed(endpoint: endpoint, underlying: "GOAWAY \(String(reflecting: errorCode))")
            context?.close(promise: nil)
            return
        }
        // No new stream from now on; those above lastStreamID go to another connection, in the order sent.
        stopTakingStreams()
        let untaken = streams.keys.filter { $0 > lastStreamID }.sorted()
        if !untaken.isEmpty {
            let givenBack = untaken.map { streamID in
                let stream = streams.removeValue(forKey: streamID)!
                return APNsUnansweredRequest(request: stream.request, slot: stream.slot, reason: .goAway(errorCode))
            }
            delegate?.connection(self, gaveBack: givenBack)
        }
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

    /// PINGs a connection that read nothing for a while, and closes one that leaves its PING unanswered.
    private func scheduleHealthCheck(at deadline: NIODeadline) {
        healthCheck?.cancel()
        healthCheck = context?.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [weak self] in
            self?.checkHealth()
        }
    }

    private func checkHealth() {
        healthCheck = nil
        guard state == .ready || state == .draining, let context else { return }
        let now = NIODeadline.now()
        if let pingSentAt {
            guard now - pingSentAt >= Self.pingTimeout else {
                scheduleHealthCheck(at: pingSentAt + Self.pingTimeout)
                return
            }
            // Told at once: closing TLS waits for the server's close_notify, which a dead connection never sends.
            becomeClosed(reason: .connectionClosed(endpoint: endpoint, underlying: "no answer to PING within \(Self.pingTimeout)"))
            context.close(promise: nil)
            return
        }
        let quietLimit = streams.isEmpty ? Self.idlePingDelay : Self.busyPingDelay
        guard now - lastRead >= quietLimit else {
            scheduleHealthCheck(at: lastRead + quietLimit)
            return
        }
        pingSentAt = now
        context.write(wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .ping(HTTP2PingData(), ack: false))), promise: nil)
        scheduleFlush()
        scheduleHealthCheck(at: now + Self.pingTimeout)
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

    /// Tells the pool, once: answers with `reason` every open request that had part of its answer, and gives back
    /// those without any.
    private func becomeClosed(reason: APNsTransportError) {
        guard state != .closed else { return }
        let wasReady = state != .connecting
        state = .closed
        connectTimer?.cancel()
        connectTimer = nil
        healthCheck?.cancel()
        healthCheck = nil
        let open = streams.sorted { $0.key < $1.key }
        streams = [:]
        var givenBack: [APNsUnansweredRequest] = []
        for (_, stream) in open {
            if stream.status == nil {
                givenBack.append(APNsUnansweredRequest(request: stream.request, slot: stream.slot, reason: reason))
            } else {
                stream.slot.fail(reason)
            }
        }
        let delegate = delegate
        self.delegate = nil
        delegate?.connectionClosed(self, neverReady: wasReady ? nil : reason)
        if !givenBack.isEmpty {
            delegate?.connection(self, gaveBack: givenBack)
        }
    }
}

@available(*, unavailable)
extension APNsConnection: Sendable {}
