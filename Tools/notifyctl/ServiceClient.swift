import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NotifyModels

/// An answer of ingest: its HTTP status and body.
struct ServiceAnswer: Sendable {
    var status: Int
    var body: Data

    var isSuccess: Bool { (200..<300).contains(status) }

    /// The body read as `Value` (the service's JSON conventions); an answer that is not one is unavailability.
    func decode<Value: Decodable>(_ type: Value.Type) throws -> Value {
        do {
            return try WireCoding.makeDecoder().decode(type, from: body)
        } catch {
            throw CommandFailure.unavailable("the service answered \(status) with what notifyctl cannot read (\(error)): \(String(decoding: body.prefix(300), as: UTF8.self))")
        }
    }
}

/// Ingest's HTTP API as notifyctl calls it (Services/ingest/openapi.yaml): JSON bodies and a bearer token, through
/// the process's shared HTTP client.
struct ServiceClient: Sendable {
    /// e.g. `http://127.0.0.1:21080`, no trailing slash.
    let baseURL: String
    /// Under --json a refusal keeps the service's body, which is printed as it came.
    let echoesAnswers: Bool

    /// How long one call may take, connecting included.
    static let callTimeout: TimeAmount = .seconds(30)
    /// The largest answer read (a page of 10,000 delivery records is about 2 MB).
    static let maximumAnswer = 32 << 20

    /// Sends one request and returns the answer, whatever its status; only no answer throws (unavailable).
    func send(_ method: HTTPMethod, _ path: String, bearer: String, body: Data? = nil) async throws -> ServiceAnswer {
        let request = makeRequest(method, path, bearer: bearer, body: body)
        do {
            let response = try await HTTPClient.shared.execute(request, timeout: Self.callTimeout)
            let buffer = try await response.body.collect(upTo: Self.maximumAnswer)
            return ServiceAnswer(status: Int(response.status.code), body: Data(buffer.readableBytesView))
        } catch {
            throw unreachable(error)
        }
    }

    /// Sends one request and requires a 2xx answer: a 4xx is a refusal, anything else unavailability.
    func call(_ method: HTTPMethod, _ path: String, bearer: String, body: Data? = nil) async throws -> ServiceAnswer {
        let answer = try await send(method, path, bearer: bearer, body: body)
        guard answer.isSuccess else { throw failure(answer) }
        return answer
    }

    /// `call` with `value` as the JSON body.
    func call(_ method: HTTPMethod, _ path: String, bearer: String, json value: some Encodable) async throws -> ServiceAnswer {
        try await call(method, path, bearer: bearer, body: try Self.encode(value))
    }

    /// Opens a request whose answer is read as it arrives (the live stream): the response once a 2xx head came, its
    /// body unread. `deadline` bounds the whole request.
    func open(_ path: String, bearer: String, headers: [(String, String)], deadline: NIODeadline) async throws -> HTTPClientResponse {
        var request = makeRequest(.GET, path, bearer: bearer, body: nil)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let refusal: ServiceAnswer
        do {
            let response = try await HTTPClient.shared.execute(request, deadline: deadline)
            if (200..<300).contains(response.status.code) { return response }
            let buffer = try await response.body.collect(upTo: Self.maximumAnswer)
            refusal = ServiceAnswer(status: Int(response.status.code), body: Data(buffer.readableBytesView))
        } catch {
            throw unreachable(error)
        }
        throw failure(refusal)
    }

    /// What a non-2xx answer means.
    func failure(_ answer: ServiceAnswer) -> CommandFailure {
        CommandFailure.answered(status: answer.status, body: answer.body, echoing: echoesAnswers)
    }

    static func encode(_ value: some Encodable) throws -> Data {
        try WireCoding.makeEncoder().encode(value)
    }

    /// `text` as one path segment or query value: everything but RFC 3986's unreserved characters percent-encoded.
    static func escaped(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    private static let unreserved = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")

    private func makeRequest(_ method: HTTPMethod, _ path: String, bearer: String, body: Data?) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(bearer)")
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        return request
    }

    private func unreachable(_ error: any Error) -> CommandFailure {
        .unavailable("no answer from \(baseURL): \(error)")
    }
}
