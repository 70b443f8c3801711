import NIOCore
import NIOHTTP2
import NIOSSL

/// One HTTP/2 connection of the APNs listener: the channel handler after `NIOHTTP2Handler`, on HTTP/2 frames, with
/// no stream channel and no task per request. A request is answered by `APNsEndpoint` once its stream ended, on the
/// connection's event loop (later only when an injected fault delays it); every answer written while reading is
/// flushed once, when the read is complete.
///
/// It ends the way APNs ends a connection: asked to quiesce (the server is shutting down), when the client
/// half-closes (TCP FIN or TLS close_notify), or after the registry's idle time without a request, it sends GOAWAY
/// (NO_ERROR, the last stream it took, and a JSON `reason` as APNs does), answers the requests it took, and closes;
/// requests still open after 5 seconds are cut off. The control API may also drop it at once, with or without GOAWAY.
final class APNsServerConnection: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    /// Flow-control window kept open for the connection and each request (HTTP/2's initial one).
    private static let window = 65535
    private static let gracefulCloseTimeout = TimeAmount.seconds(5)

    private let endpoint: APNsEndpoint
    private let registry: APNsConnectionRegistry
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
    /// When the last request arrived or was answered: the idle time counts from there.
    private var lastActivity = NIODeadline.now()
    private var idleCheck: Scheduled<Void>?

    init(endpoint: APNsEndpoint, registry: APNsConnectionRegistry) {
        self.endpoint = endpoint
        self.registry = registry
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        registry.add(context.channel)
        scheduleIdleCheck(at: lastActivity + registry.idleTimeout, context: context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        idleCheck?.cancel()
        idleCheck = nil
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
            quiesce(reason: "Shutdown", context: context)
        case ChannelEvent.inputClosed:
            // The client sends nothing more (FIN, or close_notify): requests it did not finish never will.
            arriving.removeAll()
            quiesce(reason: "Shutdown", context: context)
        case let drop as DropConnection:
            self.drop(drop.drop, context: context)
        case is IdleTimeoutChanged:
            scheduleIdleCheck(at: lastActivity + registry.idleTimeout, context: context)
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
        // After GOAWAY, streams above its last stream id are not taken: the client sends them again elsewhere.
        guard streamID > lastStreamID, !isQuiescing else { return }
        lastStreamID = streamID
        lastActivity = .now()
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
                // A connection dropped meanwhile took the request with it: nothing is delivered.
                guard self.context != nil, !self.isClosing else { return }
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
        lastActivity = .now()
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

    /// Sends GOAWAY with APNs' `reason` (e.g. "Shutdown", "IdleTimeout"), then closes once the requests taken are
    /// answered, or after the graceful close timeout.
    private func quiesce(reason: String, context: ChannelHandlerContext) {
        guard !isQuiescing else { return }
        isQuiescing = true
        idleCheck?.cancel()
        idleCheck = nil
        sendGoAway(reason: reason, context: context)
        context.eventLoop.assumeIsolated().scheduleTask(in: Self.gracefulCloseTimeout) {
            self.context?.close(promise: nil)
        }
        closeIfQuiescedAndIdle(context: context)
    }

    private func sendGoAway(reason: String, context: ChannelHandlerContext) {
        let debugData = context.channel.allocator.buffer(string: "{\"reason\":\"\(reason)\"}")
        let goAway = HTTP2Frame(
            streamID: .rootStream, payload: .goAway(lastStreamID: lastStreamID, errorCode: .noError, opaqueData: debugData))
        context.write(wrapOutboundOut(goAway), promise: nil)
        context.flush()
    }

    /// Ends the connection now, whatever it is doing: requests open get no answer.
    private func drop(_ drop: APNsConnectionRegistry.Drop, context: ChannelHandlerContext) {
        guard !isClosing else { return }
        isClosing = true
        arriving.removeAll()
        delayed.removeAll()
        switch drop {
        case .goAway:
            sendGoAway(reason: "Shutdown", context: context)
            context.close(promise: nil)
        case .reset:
            // Closed beneath TLS with SO_LINGER 0: the client's next read fails with ECONNRESET.
            let socket = try? context.pipeline.syncOperations.context(handlerType: NIOSSLServerHandler.self)
            let options = context.channel as? any SocketOptionProvider
            guard let socket, let options else {
                context.close(promise: nil)
                return
            }
            options.setSoLinger(NIOLinger(l_onoff: 1, l_linger: 0)).assumeIsolated().whenComplete { _ in
                socket.close(promise: nil)
            }
        }
    }

    /// Checks at `deadline` whether the connection has been idle for the registry's idle time, and if so says
    /// GOAWAY (reason "IdleTimeout") and closes.
    private func scheduleIdleCheck(at deadline: NIODeadline, context: ChannelHandlerContext) {
        idleCheck?.cancel()
        idleCheck = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) {
            self.idleCheck = nil
            guard let context = self.context, !self.isQuiescing, !self.isClosing else { return }
            let timeout = self.registry.idleTimeout
            if !self.arriving.isEmpty || !self.delayed.isEmpty {
                self.scheduleIdleCheck(at: .now() + timeout, context: context)
            } else if self.lastActivity + timeout <= .now() {
                self.quiesce(reason: "IdleTimeout", context: context)
            } else {
                self.scheduleIdleCheck(at: self.lastActivity + timeout, context: context)
            }
        }
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
