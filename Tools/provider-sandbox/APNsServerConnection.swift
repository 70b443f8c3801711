import NIOCore
import NIOHTTP2

/// One HTTP/2 connection of the APNs listener: the channel handler after `NIOHTTP2Handler`, on HTTP/2 frames, with
/// no stream channel and no task per request. A request is answered by `APNsEndpoint` once its stream ended, on the
/// connection's event loop (later only when an injected fault delays it); every answer written while reading is
/// flushed once, when the read is complete.
///
/// Asked to quiesce (the server is shutting down), it sends GOAWAY, answers the requests it took, and closes;
/// requests still open after 5 seconds are cut off.
final class APNsServerConnection: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    /// Flow-control window kept open for the connection and each request (HTTP/2's initial one).
    private static let window = 65535
    private static let gracefulCloseTimeout = TimeAmount.seconds(5)

    private let endpoint: APNsEndpoint
    private var context: ChannelHandlerContext?
    /// Requests whose stream has not ended yet.
    private var arriving: [HTTP2StreamID: APNsRequest] = [:]
    /// Requests waiting out an injected fault's delay.
    private var delayed: Set<HTTP2StreamID> = []
    /// The highest stream a request came on; any later HEADERS on a lower one are trailers or late.
    private var lastStreamID = HTTP2StreamID.rootStream
    private var isReading = false
    private var needsFlush = false
    private var isQuiescing = false
    private var isClosing = false

    init(endpoint: APNsEndpoint) {
        self.endpoint = endpoint
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        isReading = true
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case .headers(let headers):
            receivedHeaders(headers, streamID: frame.streamID, context: context)
        case .data(let data):
            receivedData(data, streamID: frame.streamID, context: context)
        default:
            // SETTINGS, PING and their acks are NIOHTTP2Handler's; RST_STREAM arrives as a StreamClosedEvent.
            break
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        isReading = false
        if needsFlush {
            needsFlush = false
            context.flush()
        }
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case let window as NIOHTTP2WindowUpdatedEvent:
            // Data counts against the connection's window and its stream's: reopen both while a request arrives.
            let isOpen = window.streamID == .rootStream || arriving[window.streamID] != nil
            if isOpen, let size = window.inboundWindowSize, size < Self.window / 2 {
                let update = HTTP2Frame(streamID: window.streamID, payload: .windowUpdate(windowSizeIncrement: Self.window - size))
                context.write(wrapOutboundOut(update), promise: nil)
                flush(context: context)
            }
        case let closed as StreamClosedEvent:
            // Answered in full, or reset by the client: a delayed answer to a reset stream is not written.
            arriving[closed.streamID] = nil
            delayed.remove(closed.streamID)
            closeIfQuiescedAndIdle(context: context)
        case is ChannelShouldQuiesceEvent:
            quiesce(context: context)
        default:
            break
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // NIOHTTP2Handler has reset a stream that broke the protocol; anything else ends the connection.
        if let streamError = error as? NIOHTTP2Errors.StreamError {
            arriving[streamError.streamID] = nil
            delayed.remove(streamError.streamID)
            return
        }
        context.close(promise: nil)
    }

    // MARK: Requests

    private func receivedHeaders(_ payload: HTTP2Frame.FramePayload.Headers, streamID: HTTP2StreamID, context: ChannelHandlerContext) {
        if let index = arriving.index(forKey: streamID) {
            // Trailers: nothing in them is checked, but they end the request.
            if payload.endStream {
                respond(to: arriving.remove(at: index).value, streamID: streamID, context: context)
            }
            return
        }
        guard streamID > lastStreamID else { return }
        lastStreamID = streamID
        let request = APNsRequest(headers: payload.headers)
        if payload.endStream {
            respond(to: request, streamID: streamID, context: context)
        } else {
            arriving[streamID] = request
        }
    }

    private func receivedData(_ payload: HTTP2Frame.FramePayload.Data, streamID: HTTP2StreamID, context: ChannelHandlerContext) {
        guard let index = arriving.index(forKey: streamID) else { return }
        if case .byteBuffer(let bytes) = payload.data, !arriving.values[index].isBodyFull {
            arriving.values[index].appendBody(bytes.readableBytesView)
        }
        if payload.endStream {
            respond(to: arriving.remove(at: index).value, streamID: streamID, context: context)
        }
    }

    private func respond(to request: APNsRequest, streamID: HTTP2StreamID, context: ChannelHandlerContext) {
        switch endpoint.respond(to: request, on: context.channel) {
        case .answer(let response):
            if let response {
                write(response, streamID: streamID, context: context)
            }
        case .delay(let delay, let fault, let checked):
            delayed.insert(streamID)
            let connection = context.channel
            context.eventLoop.assumeIsolated().scheduleTask(in: delay) {
                let response = self.endpoint.respond(to: checked, after: fault, on: connection)
                guard self.delayed.remove(streamID) != nil, let context = self.context else { return }
                if let response {
                    self.write(response, streamID: streamID, context: context)
                }
                self.closeIfQuiescedAndIdle(context: context)
            }
        }
    }

    private func write(_ response: APNsResponse, streamID: HTTP2StreamID, context: ChannelHandlerContext) {
        var headers = response.headers
        guard let body = response.body else {
            let head = HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: headers, endStream: true)))
            context.write(wrapOutboundOut(head), promise: nil)
            flush(context: context)
            return
        }
        let bytes = context.channel.allocator.buffer(string: body)
        headers.add(name: "content-length", value: String(bytes.readableBytes))
        context.write(wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: headers)))), promise: nil)
        let data = HTTP2Frame(streamID: streamID, payload: .data(.init(data: .byteBuffer(bytes), endStream: true)))
        context.write(wrapOutboundOut(data), promise: nil)
        flush(context: context)
    }

    /// Flushes at once, or when the read in progress is complete.
    private func flush(context: ChannelHandlerContext) {
        if isReading {
            needsFlush = true
        } else {
            context.flush()
        }
    }

    // MARK: Shutdown

    private func quiesce(context: ChannelHandlerContext) {
        guard !isQuiescing else { return }
        isQuiescing = true
        let goAway = HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: lastStreamID, errorCode: .noError, opaqueData: nil))
        context.write(wrapOutboundOut(goAway), promise: nil)
        context.flush()
        context.eventLoop.assumeIsolated().scheduleTask(in: Self.gracefulCloseTimeout) {
            self.context?.close(promise: nil)
        }
        closeIfQuiescedAndIdle(context: context)
    }

    private func closeIfQuiescedAndIdle(context: ChannelHandlerContext) {
        guard isQuiescing, !isClosing, arriving.isEmpty, delayed.isEmpty else { return }
        isClosing = true
        context.flush()
        context.close(promise: nil)
    }
}

@available(*, unavailable)
extension APNsServerConnection: Sendable {}
