import NIOCore
import NIOHTTP2

/// One APNs request: a stream of two frames, HEADERS and then DATA with END_STREAM.
struct APNsTransportRequest: Sendable {
    /// Pseudo-headers first (`:method`, `:scheme`, `:authority`, `:path`), then APNs' own headers.
    var headers: HTTP2Frame.FramePayload.Headers
    /// The JSON payload.
    var body: ByteBuffer
}

/// What APNs answered on a request's stream.
struct APNsTransportResponse: Sendable {
    var status: Int
    /// The `retry-after` header, if any.
    var retryAfter: String?
    /// The body: none on 200, otherwise `{"reason": ...}`.
    var body: ByteBuffer?
}

/// What became of one request of a batch: APNs' answer or why there was none, and how long after the batch was
/// handed to the pool it came.
struct APNsTransportAnswer: Sendable {
    var result: Result<APNsTransportResponse, APNsTransportError>
    var elapsed: TimeAmount
}
