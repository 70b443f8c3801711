import Foundation
import NotifyAPI

/// An error of the client library. `code` says what kind of failure it is; for answers of the service,
/// `statusCode` and `serverError` carry the HTTP status and the server's `{"error": {code, message, field}}`.
/// No error ever contains a user token.
public struct NotifyClientError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure, extensible without breaking `switch`es (as PostgresNIO's `PSQLError.Code`).
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case server, network, invalidResponse, storage, tokenProvider, invalidArgument
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The service answered with an error status; see `statusCode` and `serverError`.
        public static let server = Code(.server)
        /// The service could not be reached (offline, connection refused, timeout).
        public static let network = Code(.network)
        /// The service answered something this library does not understand.
        public static let invalidResponse = Code(.invalidResponse)
        /// The local cache could not be read or written.
        public static let storage = Code(.storage)
        /// The token provider closure threw.
        public static let tokenProvider = Code(.tokenProvider)
        /// The caller passed something the service would reject.
        public static let invalidArgument = Code(.invalidArgument)

        public var description: String { base.rawValue }
    }

    public var code: Code
    /// The HTTP status of the service's answer, for `.server`.
    public var statusCode: Int?
    /// The service's error body, for `.server` when it sent one.
    public var serverError: APIErrorBody.Detail?
    /// A short explanation from the library.
    public var message: String
    /// The error that caused this one (a URLError, a DecodingError, the provider's error).
    public var underlying: (any Error)?

    init(_ code: Code, _ message: String, statusCode: Int? = nil, serverError: APIErrorBody.Detail? = nil, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.statusCode = statusCode
        self.serverError = serverError
        self.underlying = underlying
    }

    public var description: String {
        var text = "NotifyClientError(\(code)): \(message)"
        if let statusCode { text += " [HTTP \(statusCode)]" }
        if let serverError {
            text += " \(serverError.code): \(serverError.message)"
            if let field = serverError.field { text += " (field \(field))" }
        }
        if let underlying { text += " — \(underlying)" }
        return text
    }

    /// True for failures worth retrying later with the same request (offline, 429, 5xx, 401 after a refresh).
    var isTransient: Bool {
        switch code {
        case .network, .tokenProvider: return true
        case .server: return statusCode.map { $0 == 401 || $0 == 408 || $0 == 429 || $0 >= 500 } ?? true
        default: return false
        }
    }
}
