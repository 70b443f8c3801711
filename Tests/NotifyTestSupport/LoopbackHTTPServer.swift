import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A plain HTTP/1.1 server on 127.0.0.1 (a port of its own) that keeps every request it gets and answers each with what
/// `answer` makes of it: a provider, token endpoint or webhook receiver stood in for inside the test process.
public final class LoopbackHTTPServer: Sendable {
    /// A request as the server read it.
    public struct Request: Sendable {
        public var method: String
        /// The path and query, e.g. `/v1/projects/p/messages:send`.
        public var uri: String
        public var headers: [(name: String, value: String)]
        public var body: [UInt8]

        /// The first value of the header `name` (case-insensitive).
        public func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }
    }

    /// What the server answers.
    public struct Response: Sendable {
        public var status: Int
        public var headers: [(name: String, value: String)]
        public var body: [UInt8]

        public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
            self.status = status
            self.headers = headers
            self.body = body
        }

        public init(status: Int, headers: [(name: String, value: String)] = [], json: String) {
            self.init(status: status, headers: headers + [("content-type", "application/json")], body: Array(json.utf8))
        }
    }

    /// The port it listens on.
    public let port: Int
    private let log: RequestLog
    private let channel: any Channel

    /// `http://127.0.0.1:<port>`.
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Every request so far, in the order they arrived.
    public var requests: [Request] { log.requests.withLock { $0 } }

    /// Runs `body` with a server answering with `answer`, and closes it afterwards.
    public static func with<Result>(
        answering answer: @escaping @Sendable (Request) -> Response, _ body: (LoopbackHTTPServer) async throws -> Result
    ) async throws -> Result {
        let server = try await LoopbackHTTPServer(answer: answer)
        let outcome: Swift.Result<Result, any Error>
        do {
            outcome = .success(try await body(server))
        } catch {
            outcome = .failure(error)
        }
        try await server.channel.close()
        return try outcome.get()
    }

    private init(answer: @escaping @Sendable (Request) -> Response) async throws {
        let log = RequestLog()
        self.log = log
        let record: @Sendable (Request) -> Response = { request in
            log.requests.withLock { $0.append(request) }
            return answer(request)
        }
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Handler(answer: record))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        guard let port = channel.localAddress?.port else { throw TestFailure("the loopback server has no port") }
        self.port = port
    }

    private final class RequestLog: Sendable {
        let requests = Mutex<[Request]>([])
    }

    /// Reads a request whole, then writes the answer.
    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        private let answer: @Sendable (Request) -> Response
        private var head: HTTPRequestHead?
        private var body: [UInt8] = []

        init(answer: @escaping @Sendable (Request) -> Response) { self.answer = answer }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                self.head = head
                body = []
            case .body(let bytes):
                body += bytes.readableBytesView
            case .end:
                guard let head else { return }
                let response = answer(Request(
                    method: head.method.rawValue, uri: head.uri, headers: head.headers.map { ($0.name, $0.value) }, body: body))
                var headers = HTTPHeaders(response.headers.map { ($0.name, $0.value) })
                headers.replaceOrAdd(name: "content-length", value: String(response.body.count))
                let status = HTTPResponseStatus(statusCode: response.status)
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))), promise: nil)
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: response.body)))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            }
        }
    }
}
