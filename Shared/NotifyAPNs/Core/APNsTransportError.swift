import NIOHTTP2

/// Why an APNs request got no answer. Its description becomes the reason of the `.unreachable` answer,
/// which dispatch retries through a retry queue and logs.
public enum APNsTransportError: Error, CustomStringConvertible {
    /// The credentials' base URL is not an https URL with a host.
    case invalidEndpoint(String)
    /// TCP or TLS failed before the connection was ready.
    case connectFailed(endpoint: String, underlying: String)
    /// The connection was not ready (TCP, TLS and the server's SETTINGS) within the connect timeout.
    case connectTimeout(endpoint: String)
    /// The connection closed, or failed, with the request still open.
    case connectionClosed(endpoint: String, underlying: String?)
    /// The server sent GOAWAY without having processed the request: it is safe to send again.
    case goAway(HTTP2ErrorCode)
    /// The server reset the request's stream, or the stream failed in HTTP/2.
    case streamReset(String)
    /// No connection or free stream within the request timeout: the request was never written.
    case notSent
    /// No answer within the request timeout from the moment the request was written.
    case timedOut
    /// The answer did not fit the 64 KiB kept of an error body, or had no valid `:status`.
    case malformedResponse(String)
    /// The key's connections were replaced (provider-token refresh) or push-dispatch is stopping.
    case poolClosed

    public var description: String {
        switch self {
        case .invalidEndpoint(let baseURL): "invalid APNs endpoint '\(baseURL)'"
        case .connectFailed(let endpoint, let underlying): "connecting to \(endpoint) failed: \(underlying)"
        case .connectTimeout(let endpoint): "connecting to \(endpoint) timed out"
        case .connectionClosed(let endpoint, nil): "the connection to \(endpoint) closed before the answer"
        case .connectionClosed(let endpoint, let underlying?): "the connection to \(endpoint) failed before the answer: \(underlying)"
        case .goAway(let code): "APNs closed the connection (GOAWAY \(String(reflecting: code))) before taking the request"
        case .streamReset(let reason): "the request's stream was reset: \(reason)"
        case .notSent: "no APNs connection or free stream within the request timeout; not sent"
        case .timedOut: "no answer from APNs within the request timeout"
        case .malformedResponse(let detail): "malformed answer from APNs: \(detail)"
        case .poolClosed: "the APNs connections of this key were closed (token refresh or shutdown)"
        }
    }
}
