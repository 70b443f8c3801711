import NIOCore

/// Publishes through ingest's HTTP API on `concurrency` keep-alive connections, one request on each at a time; the
/// most recently used idle connection takes the next request, so only as many are opened as the load needs.
final class HTTPPublishSender: PublishSender {
    private static let allocator = ByteBufferAllocator()

    private let request: HTTPPostRequest
    private let batched: Bool
    private var idle: [KeepAliveConnection]

    init(eventLoop: any EventLoop, endpoint: PlainHTTPEndpoint, request: HTTPPostRequest, batched: Bool, concurrency: Int) {
        self.request = request
        self.batched = batched
        idle = (0..<concurrency).map { _ in KeepAliveConnection(eventLoop: eventLoop, endpoint: endpoint) }
    }

    func send(_ publish: PublishRequest, completion: @escaping (PublishResult) -> Void) {
        let connection = idle.removeLast()
        let body = Self.allocator.buffer(bytes: publish.body)
        connection.send(head: request.head(bodyLength: body.readableBytes), body: body) { [batched] result in
            self.idle.append(connection)
            switch result {
            case .success(let answer):
                completion(PublishResult(
                    first: publish.first, count: publish.count, answeredAt: answer.answeredAt, status: answer.status,
                    elapsed: answer.elapsed,
                    items: PublishAnswer.items(status: answer.status, body: answer.body, count: publish.count, batched: batched),
                    retryAfter: answer.retryAfter, transportError: nil))
            case .failure(let error):
                completion(.transportError(error, for: publish))
            }
        }
    }

    func close() {
        for connection in idle { connection.close() }
    }
}
