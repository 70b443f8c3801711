import Foundation
import NotifyAPI
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends authorized requests to the service: adds the user token and the app's id (which a token of the app's
/// identity provider does not carry), asks the provider for a fresh token once when the service answers 401, and
/// turns error answers into `NotifyClientError`s.
final class HTTPTransport: Sendable {
    typealias TokenProvider = @Sendable () async throws -> String

    let baseURL: URL
    private let appId: String
    private let transport: any NotifyTransport
    private let tokenProvider: TokenProvider
    private let token = Mutex<String?>(nil)

    init(baseURL: URL, appId: String, transport: any NotifyTransport, tokenProvider: @escaping TokenProvider) {
        self.baseURL = baseURL
        self.appId = appId
        self.transport = transport
        self.tokenProvider = tokenProvider
    }

    /// A request to `path` (with `query`) carrying `headers`, without the token yet.
    func request(_ method: String, _ path: String, query: [URLQueryItem] = [], headers: [String: String] = [:], body: Data? = nil) -> URLRequest {
        var components = URLComponents(url: baseURL.appending(path: path), resolvingAgainstBaseURL: false)
        if !query.isEmpty { components?.queryItems = query }
        var request = URLRequest(url: components?.url ?? baseURL.appending(path: path))
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let body {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        return request
    }

    /// Sends `request` with the current token; on 401 fetches a fresh token once and sends it again.
    /// Answers the body of a 2xx answer; throws `NotifyClientError` otherwise.
    func send(_ request: URLRequest) async throws(NotifyClientError) -> (Data, HTTPURLResponse) {
        try await authorized(request) { request throws(NotifyClientError) in
            let (data, response): (Data, URLResponse)
            do {
                (data, response) = try await transport.data(for: request)
            } catch {
                throw NotifyClientError(.network, "\(request.httpMethod ?? "GET") \(request.url?.path ?? "") failed", underlying: error)
            }
            guard let http = response as? HTTPURLResponse else {
                throw NotifyClientError(.invalidResponse, "not an HTTP answer")
            }
            return (data, http)
        } status: { $0.1.statusCode } body: { $0.0 }
    }

    /// Runs `attempt` with the token set, retrying once with a fresh token when `status` of its result is 401.
    /// Results with a non-2xx status become `.server` errors built from `body`.
    func authorized<Result>(
        _ request: URLRequest,
        attempt: (URLRequest) async throws(NotifyClientError) -> Result,
        status: (Result) -> Int,
        body: (Result) -> Data
    ) async throws(NotifyClientError) -> Result {
        var request = request
        var retried = false
        while true {
            let cached = token.withLock { $0 }
            let current = if let cached { cached } else { try await freshToken() }
            request.setValue("Bearer \(current)", forHTTPHeaderField: "Authorization")
            request.setValue(appId, forHTTPHeaderField: IdentityProvider.appIdHeader)
            let result = try await attempt(request)
            let code = status(result)
            if code == 401 && !retried {
                retried = true
                token.withLock { $0 = nil }
                continue
            }
            guard (200..<300).contains(code) else {
                throw Self.failure(status: code, body: body(result), request: request)
            }
            return result
        }
    }

    private func freshToken() async throws(NotifyClientError) -> String {
        do {
            let fresh = try await tokenProvider()
            token.withLock { $0 = fresh }
            return fresh
        } catch {
            throw NotifyClientError(.tokenProvider, "the token provider failed", underlying: error)
        }
    }

    static func failure(status: Int, body: Data, request: URLRequest) -> NotifyClientError {
        let detail = try? JSONDecoder().decode(APIErrorBody.self, from: body).error
        return NotifyClientError(
            .server, "\(request.httpMethod ?? "GET") \(request.url?.path ?? "") was refused", statusCode: status, serverError: detail)
    }
}

extension NotifyClientError {
    /// Whether this is the service's answer with `status` (and, when given, the error code `serverCode`).
    func isServer(_ status: Int, _ serverCode: String? = nil) -> Bool {
        code == .server && statusCode == status && (serverCode == nil || serverError?.code == serverCode)
    }
}
