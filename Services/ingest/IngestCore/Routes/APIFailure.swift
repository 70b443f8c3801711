import Foundation
import Hummingbird
import NotifyJSON
import NotifyModels
import NotifyStore

/// An error answered to the client as `{"error": {"code", "message", "field"}}` with a fitting status.
struct APIFailure: HTTPResponseError {
    var status: HTTPResponse.Status
    var body: APIErrorBody
    var retryAfterSeconds: Int?

    init(_ status: HTTPResponse.Status, code: String, message: String, field: String? = nil, retryAfterSeconds: Int? = nil) {
        self.status = status
        self.body = APIErrorBody(code: code, message: message, field: field)
        self.retryAfterSeconds = retryAfterSeconds
    }

    init(_ validation: ValidationError) {
        self.init(validation.code == "payload_too_large" ? .contentTooLarge : .badRequest,
                  code: validation.code, message: validation.message, field: validation.field)
    }

    /// What the store refused, as the client is told it.
    init(_ refusal: NotifyStoreError) {
        switch refusal.code {
        case .cursorExpired: self = .cursorExpired
        default: self.init(ValidationError.invalid("pageToken", "the page token is not one this service gave out"))
        }
    }

    /// What `read` answers: what the store refused (a page token or cursor) as the client is told it, a refusal of the
    /// route's own as it is, and a database that does not answer as 503 `database_unavailable`.
    static func reading<Value>(_ read: () async throws -> Value) async throws(APIFailure) -> Value {
        do {
            return try await read()
        } catch let refusal as NotifyStoreError {
            throw APIFailure(refusal)
        } catch let failure as APIFailure {
            throw failure
        } catch {
            throw APIFailure.databaseUnavailable
        }
    }

    /// The error body as JSON, as answered on AMQP's `reply_to`.
    var jsonBody: [UInt8] {
        (try? WireCoding.makeEncoder().encode(body)).map { Array($0) } ?? []
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = try JSONResponse.make(status, body)
        if let retryAfterSeconds { response.headers[.retryAfter] = String(retryAfterSeconds) }
        return response
    }

    static func unauthorized(_ message: String) -> APIFailure {
        APIFailure(.unauthorized, code: "unauthorized", message: message, field: "Authorization")
    }

    static let brokerUnavailable = APIFailure(
        .serviceUnavailable, code: "broker_unavailable", message: "the message broker is unavailable; nothing was accepted", retryAfterSeconds: 5)

    /// The app publishes faster than its limit (`PublishRateLimiter`).
    static func rateLimited(appId: String, limit: RateLimit, retryAfterSeconds: Int) -> APIFailure {
        let limits = [limit.requestsPerSecond.map { "\($0) requests/s" }, limit.notificationsPerSecond.map { "\($0) notifications/s" }]
            .compactMap { $0 }.joined(separator: " and ")
        return APIFailure(
            .tooManyRequests, code: "rate_limited",
            message: "app \(appId) publishes faster than its limit of \(limits); nothing was accepted, try again after Retry-After",
            retryAfterSeconds: retryAfterSeconds)
    }

    static let bodyTooLarge = APIFailure(
        .contentTooLarge, code: "body_too_large", message: "the body may be at most \(JSONResponse.maximumBodyBytes) bytes")

    static let cursorExpired = APIFailure(
        .gone, code: "cursor_expired",
        message: "changes older than the retention were purged; resync from scratch: read the history and ask for changes without a cursor",
        field: "cursor")

    static let databaseUnavailable = APIFailure(
        .serviceUnavailable, code: "database_unavailable", message: "the database is unavailable", retryAfterSeconds: 5)
}

/// JSON bodies in, JSON bodies out, with the project's wire conventions.
enum JSONResponse {
    static let maximumBodyBytes = 1 << 20

    static func make(_ status: HTTPResponse.Status, _ value: some Encodable, headers: HTTPFields = [:]) throws -> Response {
        var fields = headers
        fields[.contentType] = "application/json"
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: try WireCoding.makeEncoder().encode(value))))
    }

    /// A body written with `JSONWriter`, for the answers of the hot path (JSONEncoder was 5 % of ingest's CPU per publish).
    static func make(_ status: HTTPResponse.Status, json: [UInt8]) -> Response {
        Response(status: status, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: json)))
    }

    /// Reads and decodes a request body, turning decoding failures into 400s that name the field.
    static func decode<Value: Decodable>(_ type: Value.Type, from request: Request) async throws -> Value {
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: maximumBodyBytes)
        } catch {
            throw APIFailure.bodyTooLarge
        }
        return try decode(type, from: Data(buffer.readableBytesView))
    }

    /// The body, or nil when there is none (a call whose every field is optional).
    static func decodeOptional<Value: Decodable>(_ type: Value.Type, from request: Request) async throws -> Value? {
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: maximumBodyBytes)
        } catch {
            throw APIFailure.bodyTooLarge
        }
        guard buffer.readableBytesView.contains(where: { !" \t\r\n".utf8.contains($0) }) else { return nil }
        return try decode(type, from: Data(buffer.readableBytesView))
    }

    static func decode<Value: Decodable>(_ type: Value.Type, from data: Data) throws(APIFailure) -> Value {
        do {
            return try RequestBodyDecoder().decode(type, from: data)
        } catch let error as DecodingError {
            throw APIFailure(DecodingFailure.validationError(error))
        } catch {
            throw APIFailure(.badRequest, code: "invalid_json", message: "the body is not valid JSON")
        }
    }
}
