import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// `BrokerAdministration` through RabbitMQ's management HTTP API (`/api/users`, `/api/permissions`,
/// `/api/policies`), as a user with the `administrator` tag, in one virtual host.
public struct RabbitMQManagementClient: BrokerAdministration {
    /// Where the API is and who calls it.
    public struct Configuration: Sendable {
        /// e.g. `http://127.0.0.1:15672` (no path, no credentials).
        public var baseURL: String
        public var user: String
        public var password: String
        public var virtualHost: String
        public var timeout: TimeAmount

        public init(baseURL: String, user: String, password: String, virtualHost: String, timeout: TimeAmount = .seconds(10)) {
            self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
            self.user = user
            self.password = password
            self.virtualHost = virtualHost
            self.timeout = timeout
        }

        /// From `http(s)://user:password@host:port` (as `NOTIFY_RABBITMQ_MANAGEMENT_URL` gives it); nil for anything else.
        public init?(url: String, virtualHost: String, timeout: TimeAmount = .seconds(10)) {
            guard let components = URLComponents(string: url), ["http", "https"].contains(components.scheme ?? ""),
                let host = components.host, let user = components.user, let password = components.password
            else { return nil }
            var base = URLComponents()
            (base.scheme, base.host, base.port) = (components.scheme, host, components.port)
            self.init(
                baseURL: base.string ?? "", user: user.removingPercentEncoding ?? user, password: password.removingPercentEncoding ?? password,
                virtualHost: virtualHost, timeout: timeout)
        }
    }

    private let configuration: Configuration
    private let client: HTTPClient
    private let authorization: String

    public init(configuration: Configuration, client: HTTPClient = .shared) {
        self.configuration = configuration
        self.client = client
        authorization = "Basic " + Data("\(configuration.user):\(configuration.password)".utf8).base64EncodedString()
    }

    public func putUser(_ user: String, passwordHash: String) async throws(BrokerAdminError) {
        try await call(
            .PUT, "/api/users/\(Self.segment(user))",
            body: ["password_hash": passwordHash, "hashing_algorithm": "rabbit_password_hashing_sha256", "tags": ""], doing: "create user \(user)")
    }

    public func putPermissions(_ permissions: BrokerPermissions, of user: String) async throws(BrokerAdminError) {
        try await call(
            .PUT, "/api/permissions/\(Self.segment(configuration.virtualHost))/\(Self.segment(user))",
            body: ["configure": permissions.configure, "write": permissions.write, "read": permissions.read],
            doing: "set the permissions of \(user)")
    }

    public func deleteUser(_ user: String) async throws(BrokerAdminError) {
        try await call(.DELETE, "/api/users/\(Self.segment(user))", body: nil, doing: "delete user \(user)", absentIsFine: true)
    }

    public func putPolicy(_ policy: BrokerPolicy) async throws(BrokerAdminError) {
        var definition: [String: Any] = [:]
        for (key, value) in policy.definition {
            switch value {
            case .integer(let number): definition[key] = number
            case .string(let text): definition[key] = text
            }
        }
        try await call(
            .PUT, "/api/policies/\(Self.segment(configuration.virtualHost))/\(Self.segment(policy.name))",
            body: ["pattern": policy.pattern, "definition": definition, "priority": policy.priority, "apply-to": policy.applyTo],
            doing: "set policy \(policy.name)")
    }

    private func call(_ method: HTTPMethod, _ path: String, body: [String: Any]?, doing operation: String, absentIsFine: Bool = false)
        async throws(BrokerAdminError)
    {
        let data = body.flatMap { try? JSONSerialization.data(withJSONObject: $0, options: [.sortedKeys]) }
        do {
            _ = try await request(method, path, body: data, doing: operation)
        } catch let error where absentIsFine && error.code == .refused(status: 404) {
            return
        }
    }

    /// One call of the management API at `path` (below the base URL; use `segment` for names), with a JSON `body`;
    /// answers a 2xx answer's body (at most `answerLimit` bytes). Also what `notifyctl dlq` reads and moves messages with.
    public func request(_ method: HTTPMethod, _ path: String, body: Data? = nil, doing operation: String, answerLimit: Int = 64 << 10)
        async throws(BrokerAdminError) -> Data
    {
        var request = HTTPClientRequest(url: configuration.baseURL + path)
        request.method = method
        request.headers.add(name: "Authorization", value: authorization)
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let status: Int
        let answer: Data
        do {
            let response = try await client.execute(request, timeout: configuration.timeout)
            status = Int(response.status.code)
            answer = Data(try await response.body.collect(upTo: answerLimit).readableBytesView)
        } catch {
            throw BrokerAdminError(code: .unreachable, operation: operation, detail: "\(error)")
        }
        switch status {
        case 200..<300: return answer
        case 401, 403: throw BrokerAdminError(code: .unauthorized, operation: operation, detail: Self.reason(answer))
        default: throw BrokerAdminError(code: .refused(status: status), operation: operation, detail: Self.reason(answer))
        }
    }

    /// The `error` and `reason` RabbitMQ gives in an error body, or the body's start.
    private static func reason(_ body: Data) -> String {
        if let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any], let reason = object["reason"] as? String {
            return (object["error"] as? String).map { "\($0): \(reason)" } ?? reason
        }
        return String(decoding: body.prefix(300), as: UTF8.self)
    }

    /// `text` as one path segment (everything but unreserved characters percent-encoded, `/` included).
    public static func segment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")) ?? text
    }
}

// Printed in logs (ServiceLifecycle describes each service at debug level, and services hold a client): never the
// password nor the Authorization header.
extension RabbitMQManagementClient: CustomStringConvertible {
    public var description: String { "RabbitMQManagementClient(\(configuration))" }
}

extension RabbitMQManagementClient.Configuration: CustomStringConvertible {
    public var description: String { "\(baseURL) as \(user), virtual host \(virtualHost)" }
}
