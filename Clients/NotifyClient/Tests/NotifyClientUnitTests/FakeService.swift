import Foundation
import NotifyAPI
import NotifyClient
import Synchronization
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The service as a client sees it, in the test process: answers each request with what `answer` makes of it (or fails it
/// as a network without connection does), and keeps every request the client sent.
final class FakeService: NotifyTransport {
    /// A request as the service received it.
    struct Request: Sendable {
        var method: String
        var path: String
        var query: [String: String]
        var headers: [String: String]
        var body: Data?

        /// The JSON body read as the service reads it.
        func decoded<Value: Decodable>(_: Value.Type) throws -> Value {
            try WireCoding.makeDecoder().decode(Value.self, from: try #require(body, "\(method) \(path) has no body"))
        }
    }

    /// An answer: a status and a JSON body, or no answer at all.
    enum Answer: Sendable {
        case status(Int, json: String = "{}")
        case offline

        /// A 200 answer carrying `value` as the service encodes it.
        static func ok(_ value: some Encodable) throws -> Answer {
            .status(200, json: String(decoding: try WireCoding.makeEncoder().encode(value), as: UTF8.self))
        }

        /// The service's error answer: `{"error": {code, message, field}}`.
        static func error(_ status: Int, _ code: String, field: String? = nil) throws -> Answer {
            let body = try WireCoding.makeEncoder().encode(APIErrorBody(code: code, message: "refused: \(code)", field: field))
            return .status(status, json: String(decoding: body, as: UTF8.self))
        }
    }

    static let baseURL = URL(string: "https://notify.example/api")!

    private let answer: @Sendable (Request) throws -> Answer
    private let received = Mutex<[Request]>([])

    init(answering answer: @escaping @Sendable (Request) throws -> Answer) { self.answer = answer }

    /// Every request so far, in order.
    var requests: [Request] { received.withLock { $0 } }

    func data(for request: URLRequest) async throws -> (Data, URLResponse) {
        let url = try #require(request.url)
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        let seen = Request(
            method: request.httpMethod ?? "GET", path: String(url.path.dropFirst(Self.baseURL.path.count)),
            query: Dictionary((components?.queryItems ?? []).map { ($0.name, $0.value ?? "") }) { $1 },
            headers: request.allHTTPHeaderFields ?? [:], body: request.httpBody)
        received.withLock { $0.append(seen) }
        switch try answer(seen) {
        case .offline:
            throw URLError(.notConnectedToInternet)
        case .status(let status, let json):
            let response = try #require(HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: ["Content-Type": "application/json"]))
            return (Data(json.utf8), response)
        }
    }
}
