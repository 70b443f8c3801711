import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// A thin JSON-over-HTTP wrapper around one shared `HTTPClient`, for setup and the sandbox's control API (publishing
/// has its own client: see `HTTPPublishSender`).
struct JSONClient: Sendable {
    struct Answer: Sendable {
        let status: Int
        let body: Data
        /// Request sent -> answer fully read.
        let elapsed: Duration
    }

    let http: HTTPClient
    static let maximumBody = 64 << 20

    init(connectionsPerHost: Int) {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(
            idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: max(connectionsPerHost, 1))
        configuration.timeout = .init(connect: .seconds(5), read: .seconds(60))
        http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    func shutdown() async throws { try await http.shutdown() }

    /// Runs `body` with a client of its own, shut down afterwards whether `body` returned or threw.
    static func using<Result>(connectionsPerHost: Int, _ body: (JSONClient) async throws -> Result) async throws -> Result {
        let client = JSONClient(connectionsPerHost: connectionsPerHost)
        let result: Result
        do {
            result = try await body(client)
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
        return result
    }

    /// Sends a request, with `Authorization: Bearer <bearer>` or else `authorization` as it is; any status is an answer,
    /// only transport failures throw.
    func send(_ method: HTTPMethod, _ url: String, bearer: String? = nil, authorization: String? = nil, body: Data? = nil) async throws -> Answer {
        var request = HTTPClientRequest(url: url)
        request.method = method
        if let value = bearer.map({ "Bearer \($0)" }) ?? authorization { request.headers.add(name: "Authorization", value: value) }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let start = ContinuousClock.now
        let response = try await http.execute(request, timeout: .seconds(60))
        let buffer = try await response.body.collect(upTo: Self.maximumBody)
        return Answer(status: Int(response.status.code), body: Data(buffer.readableBytesView), elapsed: ContinuousClock.now - start)
    }

    /// Sends `value` as JSON and decodes the answer, which must have a 2xx status.
    func call<Reply: Decodable>(
        _ method: HTTPMethod, _ url: String, bearer: String? = nil, json value: some Encodable, as: Reply.Type
    ) async throws -> Reply {
        let answer = try await send(method, url, bearer: bearer, body: try JSONEncoder().encode(value))
        return try Self.decode(Reply.self, answer, method: method, url: url)
    }

    static func decode<Reply: Decodable>(_ type: Reply.Type, _ answer: Answer, method: HTTPMethod, url: String) throws -> Reply {
        try read(answer, method: method, url: url) { try JSONDecoder().decode(Reply.self, from: $0) }
    }

    /// The answer's body as `reader` reads it; the answer must have a 2xx status.
    static func read<Reply>(_ answer: Answer, method: HTTPMethod, url: String, with reader: (Data) throws -> Reply) throws -> Reply {
        guard (200..<300).contains(answer.status) else {
            throw LoadGenError("\(method) \(url) answered \(answer.status): \(String(decoding: answer.body.prefix(500), as: UTF8.self))")
        }
        do {
            return try reader(answer.body)
        } catch {
            throw LoadGenError("\(method) \(url): unexpected answer \(String(decoding: answer.body.prefix(500), as: UTF8.self)) (\(error))")
        }
    }
}
