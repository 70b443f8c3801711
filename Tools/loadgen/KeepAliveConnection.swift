import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// One keep-alive HTTP/1.1 connection over plain TCP carrying one request at a time: it connects when first used and
/// again after the server closed it. NIOHTTP1's encoder writes each request and its decoder frames each answer (RFC
/// 9112: interim answers skipped, chunked, Content-Length or read to the end of the connection). It belongs to one
/// event loop: every method must be called there, and completions run there.
final class KeepAliveConnection {
    /// The answer to one request.
    struct Answer {
        let status: Int
        let body: [UInt8]
        /// When its last byte had been read.
        let answeredAt: Date
        /// Request handed over -> answer read, connecting included.
        let elapsed: Duration
        /// Whether it carried Retry-After.
        let retryAfter: Bool
    }

    typealias Completion = (Result<Answer, any Error>) -> Void

    static let connectTimeout = TimeAmount.seconds(5)
    static let answerTimeout = TimeAmount.seconds(60)
    /// A longer answer body fails the request: ingest's answers are a few kilobytes.
    static let maximumBody = 64 << 20

    /// The request waiting for its answer; `number` tells its late events (a failed write) from the next request's.
    private struct Exchange {
        let number: Int
        let sentAt: NIODeadline
        let completion: Completion
    }

    private let eventLoop: any EventLoop
    private let endpoint: PlainHTTPEndpoint
    /// The open connection; nil before the first request and once it closed or was given up.
    private var channel: (any Channel)?
    /// The waiting request's answer so far: its head once read, and its body's bytes.
    private var answerHead: HTTPResponseHead?
    private var answerBody = ByteBuffer()
    private var exchange: Exchange?
    private var exchangesStarted = 0
    /// Fires at the waiting request's answer deadline (re-armed for a later request rather than per request).
    private var timeoutCheck: Scheduled<Void>?

    init(eventLoop: any EventLoop, endpoint: PlainHTTPEndpoint) {
        self.eventLoop = eventLoop
        self.endpoint = endpoint
    }

    /// Sends a request of `head` and `body`, and calls `completion` with its answer or with what failed (connecting,
    /// writing, a malformed answer, the connection closing first, or no answer within a minute).
    func send(head: HTTPRequestHead, body: ByteBuffer, completion: @escaping Completion) {
        let request = Request(head: head, body: body)
        precondition(exchange == nil, "one request at a time")
        exchangesStarted += 1
        let number = exchangesStarted
        exchange = Exchange(number: number, sentAt: .now(), completion: completion)
        armTimeoutCheck()
        if let channel {
            write(request, on: channel, exchange: number)
            return
        }
        connect().assumeIsolated().whenComplete { result in
            switch result {
            case .success(let channel):
                guard self.exchange?.number == number else {
                    channel.close(promise: nil)
                    return
                }
                self.channel = channel
                self.write(request, on: channel, exchange: number)
            case .failure(let error):
                self.finish(number, .failure(error))
            }
        }
    }

    /// Closes the connection; a request still waiting fails.
    func close() {
        timeoutCheck?.cancel()
        timeoutCheck = nil
        if let channel { giveUp(channel) }
        if let exchange { finish(exchange.number, .failure(LoadGenError("the connection was closed before the answer came"))) }
    }

    private func connect() -> EventLoopFuture<any Channel> {
        let connection = NIOLoopBound(self, eventLoop: eventLoop)
        return ClientBootstrap(group: eventLoop)
            .connectTimeout(Self.connectTimeout)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers(leftOverBytesStrategy: .fireError)
                    try channel.pipeline.syncOperations.addHandler(ChannelEvents(connection: connection.value))
                }
            }
            .connect(host: endpoint.host, port: endpoint.port)
    }

    private struct Request {
        let head: HTTPRequestHead
        let body: ByteBuffer
    }

    private func write(_ request: Request, on channel: any Channel, exchange number: Int) {
        answerHead = nil
        answerBody.clear()
        channel.write(HTTPClientRequestPart.head(request.head), promise: nil)
        channel.write(HTTPClientRequestPart.body(.byteBuffer(request.body)), promise: nil)
        channel.writeAndFlush(HTTPClientRequestPart.end(nil)).assumeIsolated().whenFailure { error in
            self.giveUp(channel)
            self.finish(number, .failure(error))
        }
    }

    /// Forgets `channel` (a later request connects anew) and closes it.
    private func giveUp(_ channel: any Channel) {
        if channel === self.channel { self.channel = nil }
        channel.close(promise: nil)
    }

    private func finish(_ number: Int, _ result: Result<Answer, any Error>) {
        guard let exchange, exchange.number == number else { return }
        self.exchange = nil
        exchange.completion(result)
    }

    // MARK: Channel events

    fileprivate func read(_ part: HTTPClientResponsePart, from source: any Channel) {
        guard source === channel, let exchange else { return }
        switch part {
        case .head(let head):
            answerHead = head
        case .body(var bytes):
            guard answerBody.readableBytes + bytes.readableBytes <= Self.maximumBody else {
                giveUp(source)
                finish(exchange.number, .failure(LoadGenError("answer body larger than \(Self.maximumBody) bytes")))
                return
            }
            answerBody.writeBuffer(&bytes)
        case .end:
            guard let head = answerHead else { return }
            if !head.isKeepAlive { giveUp(source) }
            let answeredAt = Date()
            let elapsed = Duration.nanoseconds((NIODeadline.now() - exchange.sentAt).nanoseconds)
            let body = answerBody.readBytes(length: answerBody.readableBytes) ?? []
            finish(exchange.number, .success(Answer(
                status: Int(head.status.code), body: body, answeredAt: answeredAt, elapsed: elapsed,
                retryAfter: head.headers.contains(name: "Retry-After"))))
        }
    }

    /// The decoder has already handed over an answer whose body ran to the end of the connection.
    fileprivate func closed(_ source: any Channel) {
        guard source === channel else { return }
        channel = nil
        if let exchange { finish(exchange.number, .failure(LoadGenError("the connection closed before the answer was complete"))) }
    }

    fileprivate func failed(_ error: any Error, on source: any Channel) {
        guard source === channel else { return }
        giveUp(source)
        if let exchange { finish(exchange.number, .failure(LoadGenError("malformed answer or failed connection: \(error)"))) }
    }

    // MARK: Answer timeout

    private func armTimeoutCheck() {
        guard timeoutCheck == nil, let exchange else { return }
        timeoutCheck = eventLoop.assumeIsolated().scheduleTask(deadline: exchange.sentAt + Self.answerTimeout) {
            self.checkTimeout()
        }
    }

    /// Fails the waiting request if its minute is up, else waits for the deadline of the one waiting now.
    private func checkTimeout() {
        timeoutCheck = nil
        guard let exchange else { return }
        guard NIODeadline.now() >= exchange.sentAt + Self.answerTimeout else {
            armTimeoutCheck()
            return
        }
        if let channel { giveUp(channel) }
        finish(exchange.number, .failure(LoadGenError("no answer within \(Self.answerTimeout.nanoseconds / 1_000_000_000) s")))
    }
}

/// Hands a connection's channel events to its `KeepAliveConnection`.
private final class ChannelEvents: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart

    private let connection: KeepAliveConnection

    init(connection: KeepAliveConnection) {
        self.connection = connection
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        connection.read(unwrapInboundIn(data), from: context.channel)
    }

    func channelInactive(context: ChannelHandlerContext) {
        connection.closed(context.channel)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        connection.failed(error, on: context.channel)
    }
}
