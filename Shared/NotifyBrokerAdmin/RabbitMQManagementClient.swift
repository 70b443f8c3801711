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
    }

    private let configuration: Configuration
    private let client: HTTPClient
    private let authorization: String

    public init(configuration: Configuration, client: HTTPClient = .shared) {
        self.configuration = configuration
        self.client = client
        authorization = "Basic " + Data("\(configuration.user):\(configuration.password)".utf8).base64EncodedString()
    }

    public func putUser(_ user: String, password: String) async throws(BrokerAdminError) {
        try await call(.PUT, "/api/users/\(Self.segment(user))", body: ["password": password, "tags": ""], doing: "create user \(user)")
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
        var request = HTTPClientRequest(url: configuration.baseURL + path)
        request.method = method
        request.headers.add(name: "Authorization", value: authorization)
        if let body, let data = try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys]) {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: data))
        }
        let status: Int
        let answer: String
        do {
            let response = try await client.execute(request, timeout: configuration.timeout)
            status = Int(response.status.code)
            answer = String(buffer: try await response.body.collect(upTo: 64 << 10))
        } catch {
            throw BrokerAdminError(code: .unreachable, operation: operation, detail: "\(error)")
        }
        switch status {
        case 200..<300: return
        case 404 where absentIsFine: return
        case 401, 403: throw BrokerAdminError(code: .unauthorized, operation: operation, detail: Self.reason(answer))
        default: throw BrokerAdminError(code: .refused(status: status), operation: operation, detail: Self.reason(answer))
        }
    }

    /// The `reason` RabbitMQ gives in an error body, or the body's start.
    private static func reason(_ body: String) -> String {
        if let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any], let reason = object["reason"] as? String {
            return reason
        }
        return String(body.prefix(200))
    }

    /// `text` as one path segment (everything but unreserved characters percent-encoded, `/` included).
    static func segment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")) ?? text
    }
}
