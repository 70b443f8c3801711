import Foundation
import HTTPTypes
import Hummingbird
import Synchronization

/// Requests to the providers listener kept as they arrived (method, path, every header in order, `authorization`
/// included, and the body's bytes) for the paths a test asked for (`POST /captures`), so that implementations other
/// than the sandbox's can check what was sent: a Web Push body decrypted and its VAPID JWT verified by a third-party
/// library, an OAuth assertion verified by another JWT library. In memory only, never written to a file or logged:
/// they hold bearer credentials.
final class RequestCaptures: Sendable {
    /// One captured request, as the control API answers it: the body base64.
    struct CapturedRequest: Encodable, Sendable {
        struct Header: Encodable, Sendable {
            let name: String
            let value: String
        }

        let method: String
        let path: String
        let headers: [Header]
        let body: String
        let receivedAt: String
    }

    /// A capture of one path: the requests it took, at most `limit`.
    struct Capture: Encodable, Sendable {
        let captureId: String
        let path: String
        let limit: Int
        var requests: [CapturedRequest] = []
        /// Requests to the path that came after `limit` was reached, not kept.
        var missed = 0
    }

    /// At most this many captures at once.
    static let maximumCaptures = 64
    /// At most this many requests kept by one capture.
    static let maximumLimit = 100
    /// While its path is captured, a request with a larger body is refused (413) before the provider's own checks; no
    /// provider accepts one.
    static let maximumBodySize = 1 << 20

    private let captures = Mutex<[String: Capture]>([:])

    /// Arms a capture of `path`; nil when `maximumCaptures` are armed already.
    func arm(path: String, limit: Int) -> Capture? {
        let capture = Capture(captureId: UUID().uuidString.lowercased(), path: path, limit: limit)
        return captures.withLock { captures in
            guard captures.count < Self.maximumCaptures else { return nil }
            captures[capture.captureId] = capture
            return capture
        }
    }

    func capture(id: String) -> Capture? {
        captures.withLock { $0[id] }
    }

    /// Ends a capture; false if there is none with that id.
    func remove(id: String) -> Bool {
        captures.withLock { $0.removeValue(forKey: id) != nil }
    }

    func isArmed(path: String) -> Bool {
        captures.withLock { captures in captures.values.contains { $0.path == path } }
    }

    /// Keeps the request in every capture of its path that has room.
    func record(_ request: Request, body: ByteBuffer) {
        var receivedAt: [UInt8] = []
        ISO8601Timestamp.append(.now, to: &receivedAt)
        let captured = CapturedRequest(
            method: request.method.rawValue,
            path: request.uri.path,
            headers: request.headers.map { CapturedRequest.Header(name: $0.name.canonicalName, value: $0.value) },
            body: Data(body.readableBytesView).base64EncodedString(),
            receivedAt: String(decoding: receivedAt, as: UTF8.self)
        )
        captures.withLock { captures in
            for (id, var capture) in captures where capture.path == captured.path {
                if capture.requests.count < capture.limit {
                    capture.requests.append(captured)
                } else {
                    capture.missed += 1
                }
                captures[id] = capture
            }
        }
    }
}

/// Reads the body of a request whose path a capture waits for, keeps a copy, and passes the request on unchanged.
struct RequestCaptureMiddleware<Context: RequestContext>: RouterMiddleware {
    let captures: RequestCaptures

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard captures.isArmed(path: request.uri.path) else { return try await next(request, context) }
        var request = request
        let body = try await request.collectBody(upTo: RequestCaptures.maximumBodySize)
        captures.record(request, body: body)
        return try await next(request, context)
    }
}
