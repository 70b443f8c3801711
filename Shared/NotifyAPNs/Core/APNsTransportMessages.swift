import NIOCore
import NIOHTTP2

/// One APNs request: a stream of two frames, HEADERS and then DATA with END_STREAM.
public struct APNsTransportRequest: Sendable {
    /// Pseudo-headers first (`:method`, `:scheme`, `:authority`, `:path`), then APNs' own headers.
    public var headers: HTTP2Frame.FramePayload.Headers
    /// The JSON payload.
    public var body: ByteBuffer

    public init(headers: HTTP2Frame.FramePayload.Headers, body: ByteBuffer) {
        self.headers = headers
        self.body = body
    }
}

/// What APNs answered on a request's stream.
public struct APNsTransportResponse: Sendable {
    public var status: Int
    /// The `retry-after` header, if any.
    public var retryAfter: String?
    /// The body: none on 200, otherwise `{"reason": ...}`.
    public var body: ByteBuffer?

    public init(status: Int, retryAfter: String? = nil, body: ByteBuffer? = nil) {
        self.status = status
        self.retryAfter = retryAfter
        self.body = body
    }
}

/// What became of one request of a batch: APNs' answer or why there was none, and how long after the batch was
/// handed to the pool it came.
public struct APNsTransportAnswer: Sendable {
    public var result: Result<APNsTransportResponse, APNsTransportError>
    public var elapsed: TimeAmount

    public init(result: Result<APNsTransportResponse, APNsTransportError>, elapsed: TimeAmount) {
        self.result = result
        self.elapsed = elapsed
    }
}
