import HTTPTypes
import Hummingbird

/// A push service error answer in the shape Mozilla's autopush uses:
/// `{"code": <status>, "errno": <n>, "error": <status phrase>, "message": ...}`.
struct WebPushError: Error, Sendable {
    let status: Int
    let errno: Int
    let message: String

    static let unknownSubscription = WebPushError(status: 404, errno: 102, message: "Subscription not found")
    static let expiredSubscription = WebPushError(status: 410, errno: 103, message: "Subscription expired")
    static let payloadTooLarge = WebPushError(status: 413, errno: 104, message: "Payload too large: at most 4096 bytes")
    static let missingTTL = WebPushError(status: 400, errno: 111, message: "Missing TTL header")
    static let invalidTTL = WebPushError(status: 400, errno: 112, message: "Invalid TTL header value")
    static let invalidTopic = WebPushError(status: 400, errno: 113, message: "Topic must be at most 32 base64url characters")
    static let invalidUrgency = WebPushError(status: 400, errno: 114, message: "Urgency must be very-low, low, normal or high")
    static let unknownEncoding = WebPushError(status: 400, errno: 110, message: "Content-Encoding must be aes128gcm")
    static let keyMismatch = WebPushError(
        status: 403,
        errno: 109,
        message: "The VAPID key does not match the subscription's applicationServerKey"
    )

    static func unauthorized(_ message: String) -> WebPushError {
        WebPushError(status: 401, errno: 109, message: "Invalid VAPID authorization: \(message)")
    }

    /// Sandbox-specific: a real push service cannot decrypt, so it cannot tell.
    static func invalidEncryption(_ message: String) -> WebPushError {
        WebPushError(status: 400, errno: 110, message: "Payload cannot be decrypted: \(message)")
    }

    /// An injected fault: its reason is the message; the errno follows the status.
    init(fault: Fault) {
        let status = fault.status ?? 500
        let errno = [400: 110, 401: 109, 403: 109, 404: 102, 410: 103, 413: 104, 429: 201, 503: 201][status] ?? 999
        self.init(status: status, errno: errno, message: fault.reason ?? "")
    }

    init(status: Int, errno: Int, message: String) {
        self.status = status
        self.errno = errno
        self.message = message
    }

    private static let statusPhrases = [
        400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 410: "Gone",
        413: "Payload Too Large", 429: "Too Many Requests", 500: "Internal Server Error", 503: "Service Unavailable",
    ]

    func response(retryAfter: String? = nil) -> Response {
        let phrase = Self.statusPhrases[status] ?? "Error"
        let body = "{\"code\":\(status),\"errno\":\(errno),\"error\":\(JSONText.quoted(phrase))"
            + ",\"message\":\(JSONText.quoted(message))}"
        var headers: HTTPFields = [.contentType: "application/json"]
        if let retryAfter {
            headers[.retryAfter] = retryAfter
        }
        return Response(
            status: HTTPResponse.Status(code: status),
            headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(string: body))
        )
    }
}

/// The RFC 8030 headers of a push message request.
enum WebPushRequestValidator {
    static let maximumPayloadSize = 4096
    private static let urgencies: Set = ["very-low", "low", "normal", "high"]

    /// Headers kept in a delivery record.
    static func recordedHeaders(_ headers: HTTPFields) -> RecordedHeaders {
        RecordedHeaders(headers) { ["ttl", "urgency", "topic", "content-encoding", "content-type"].contains($0) }
    }

    /// Checks `TTL` (required), `Urgency` and `Topic`, and answers the TTL.
    static func validateHeaders(_ headers: HTTPFields) throws(WebPushError) -> Int {
        guard let ttlText = headers[.ttl] else { throw .missingTTL }
        guard let ttl = Int(ttlText), ttl >= 0 else { throw .invalidTTL }
        if let urgency = headers[.urgency], !urgencies.contains(urgency) { throw .invalidUrgency }
        if let topic = headers[.topic] {
            guard (1...32).contains(topic.count),
                topic.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
            else { throw .invalidTopic }
        }
        return ttl
    }

    /// The plaintext as record payload: compact JSON if it parses, else a JSON string; null if empty.
    static func payload(_ plaintext: [UInt8]) -> [UInt8] {
        if plaintext.isEmpty { return Array("null".utf8) }
        if let document = JSONDocument(plaintext) {
            return document.hasWhitespace ? JSONText.compact(plaintext) : plaintext
        }
        var quoted: [UInt8] = []
        JSONText.appendQuoted(String(decoding: plaintext, as: UTF8.self), to: &quoted)
        return quoted
    }
}

extension HTTPField.Name {
    static let ttl = Self("ttl")!
    static let urgency = Self("urgency")!
    static let topic = Self("topic")!
}
