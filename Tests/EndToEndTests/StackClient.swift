import AsyncHTTPClient
import Foundation
import NotifyModels
import NotifyTestSupport
import Testing

/// An HTTP answer: status and body.
struct HTTPAnswer: Sendable {
    var status: Int
    var body: Data
    /// The `Retry-After` header, if the answer had one.
    var retryAfter: String? = nil

    var text: String { String(decoding: body, as: UTF8.self) }

    func decode<Value: Decodable>(_ type: Value.Type) throws -> Value {
        do {
            return try WireCoding.makeDecoder().decode(type, from: body)
        } catch {
            throw TestFailure("cannot read the \(status) answer as \(Value.self): \(error); body: \(text)")
        }
    }
}

/// The HTTP calls of operators, app servers and devices against ingest, and of tests against the sandbox.
enum StackClient {
    /// Which failures a call retries until its deadline.
    enum Retry: Sendable {
        /// 503: ingest says the broker or the database is unavailable and nothing was accepted.
        case whileUnavailable
        /// 503 and connection errors (ingest is down or restarting).
        case whileUnavailableOrUnreachable
    }

    enum Method: String, Sendable {
        case GET, POST, PUT, PATCH, DELETE
    }

    static func send(
        _ method: Method, _ url: String, bearer: String? = nil, json: Data? = nil, headers: [String: String] = [:],
        retry: Retry = .whileUnavailable, deadline: Duration = .seconds(30)
    ) async throws -> HTTPAnswer {
        let end = ContinuousClock.now + deadline
        while true {
            var request = HTTPClientRequest(url: url)
            request.method = .init(rawValue: method.rawValue)
            if let bearer { request.headers.add(name: "Authorization", value: "Bearer \(bearer)") }
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            if let json {
                request.headers.add(name: "Content-Type", value: "application/json")
                request.body = .bytes(json)
            }
            do {
                let response = try await HTTPClient.shared.execute(request, timeout: .seconds(15))
                let body = try await response.body.collect(upTo: 8 << 20)
                let answer = HTTPAnswer(
                    status: Int(response.status.code), body: Data(body.readableBytesView), retryAfter: response.headers.first(name: "retry-after"))
                ResponseRecord.append(method, url, status: answer.status, contentType: response.headers.first(name: "content-type"), body: answer.body)
                if answer.status != 503 || ContinuousClock.now >= end { return answer }
            } catch {
                guard retry == .whileUnavailableOrUnreachable, ContinuousClock.now < end else {
                    throw TestFailure("\(method) \(url) failed: \(error)")
                }
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    static func encode(_ value: some Encodable) throws -> Data {
        try WireCoding.makeEncoder().encode(value)
    }
}

/// An app made for one test: created by the operator, with APNs credentials that point at the sandbox.
struct TestApp: Sendable {
    var appId: String
    var apiKey: String
    var clientSigningKey: String
    var topic: String
    /// The app's broker user, when created with broker access.
    var broker: BrokerCredentials?

    private struct CreateApp: Encodable {
        var name: String
        var brokerAccess: Bool?
    }

    private struct CreatedApp: Decodable {
        var appId: String
        var apiKey: String
        var clientSigningKey: String
        var broker: BrokerCredentials?
    }

    private struct Credentials: Encodable {
        var teamId: String
        var keyId: String
        var privateKey: String
        var topic: String
        var environment = "sandbox"
        var endpoint: String
    }

    /// Creates an app (with a broker user of its own when `brokerAccess`) through `ingestURL`, and stores a new sandbox
    /// key as its APNs credentials.
    static func create(brokerAccess: Bool = false, ingestURL: String = Stack.ingestURL) async throws -> TestApp {
        let created = try await StackClient.send(
            .POST, "\(ingestURL)/v1/apps", bearer: Stack.adminToken,
            json: StackClient.encode(CreateApp(name: "e2e \(uniqueSuffix())", brokerAccess: brokerAccess ? true : nil)))
        guard created.status == 201 else { throw TestFailure("POST /v1/apps answered \(created.status): \(created.text)") }
        let app = try created.decode(CreatedApp.self)
        let testApp = TestApp(
            appId: app.appId, apiKey: app.apiKey, clientSigningKey: app.clientSigningKey, topic: "com.example.notify.e2e", broker: app.broker)
        SecretsUsed.record([app.apiKey, app.clientSigningKey] + [app.broker?.password].compactMap { $0 })
        try await testApp.replaceAPNsKey()
        return testApp
    }

    /// Stores a new sandbox APNs key (for the app's topic) as the app's APNs credentials, as after revoking the old one;
    /// answers the key.
    @discardableResult
    func replaceAPNsKey() async throws -> SandboxKey {
        let apnsKey = try await Sandbox.newKey(topic: topic)
        // The PEM's base64 lines: how the key would appear in a log however it was quoted.
        SecretsUsed.record(apnsKey.privateKey.split(separator: "\n").filter { !$0.hasPrefix("-----") }.map(String.init))
        let stored = try await StackClient.send(
            .PUT, "\(Stack.ingestURL)/v1/apps/\(appId)/providers/apns", bearer: Stack.adminToken,
            json: StackClient.encode(Credentials(
                teamId: apnsKey.teamId, keyId: apnsKey.keyId, privateKey: apnsKey.privateKey, topic: apnsKey.topic,
                endpoint: Stack.sandboxAPNsURL)))
        guard stored.status == 200 else {
            throw TestFailure("PUT /v1/apps/\(appId)/providers/apns answered \(stored.status): \(stored.text)")
        }
        return apnsKey
    }

    func userToken(_ userId: String) async throws -> String {
        try await UserToken.mint(userId: userId, appId: appId, signingKey: clientSigningKey)
    }

    /// Registers an APNs device of `userId` with a new random device token and returns the token.
    func registerDevice(of userId: String) async throws -> String {
        try await registerSubscribedDevice(of: userId).pushToken
    }

    /// Registers an APNs device of `userId` with a new random device token; returns the token and the subscription id.
    func registerSubscribedDevice(of userId: String) async throws -> (pushToken: String, subscriptionId: String) {
        struct Registered: Decodable {
            var subscriptionId: String
        }
        let pushToken = randomHex(bytes: 32)
        let answer = try await registerDevice(SubscriptionRequest(platform: .apns, pushToken: pushToken, displayName: "e2e device"), token: try await userToken(userId))
        // 201 once stored; 202 if storage had not applied it within ingest's wait (it is queued before any later publish).
        guard answer.status == 201 || answer.status == 202 else { throw TestFailure("POST /v1/me/subscriptions answered \(answer.status): \(answer.text)") }
        return (pushToken, try answer.decode(Registered.self).subscriptionId)
    }

    func registerDevice(_ request: SubscriptionRequest, token: String) async throws -> HTTPAnswer {
        try await StackClient.send(.POST, "\(Stack.ingestURL)/v1/me/subscriptions", bearer: token, json: StackClient.encode(request))
    }

    /// Publishes one notification or a batch as the app server (any `Encodable` body, to send invalid ones too).
    func publish(_ body: some Encodable, apiKey: String? = nil, retry: StackClient.Retry = .whileUnavailable) async throws -> HTTPAnswer {
        try await StackClient.send(
            .POST, "\(Stack.ingestURL)/v1/apps/\(appId)/notifications", bearer: apiKey ?? self.apiKey,
            json: StackClient.encode(body), retry: retry, deadline: .seconds(90))
    }

    private struct Accepted: Decodable {
        var id: String
    }

    /// Publishes and expects 202; returns the notification id, lowercased as pushes carry it.
    func publishAccepted(_ request: NotificationRequest, retry: StackClient.Retry = .whileUnavailable) async throws -> String {
        let answer = try await publish(request, retry: retry)
        guard answer.status == 202 else { throw TestFailure("publishing answered \(answer.status): \(answer.text)") }
        return try answer.decode(Accepted.self).id
    }
}

extension NotificationRequest {
    /// A visual notification for `userId`.
    static func alert(to userId: String, title: String = "Hello", body: String = "from the end-to-end tests") -> NotificationRequest {
        NotificationRequest(userId: userId, payload: NotificationPayload(visualContent: VisualContent(title: title, body: body)))
    }
}

/// Checks an error answer: the status and `{"error": {"code", "message", "field"}}` with that code and field.
func expectAPIError(
    _ answer: HTTPAnswer, status: Int, code: String? = nil, field: String?, _ what: String,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(answer.status == status, "\(what): expected \(status), got \(answer.status): \(answer.text)", sourceLocation: sourceLocation)
    guard let body = try? WireCoding.makeDecoder().decode(APIErrorBody.self, from: answer.body) else {
        Issue.record("\(what): the body is not {\"error\": {\"code\", \"message\", \"field\"}}: \(answer.text)", sourceLocation: sourceLocation)
        return
    }
    if let code {
        #expect(body.error.code == code, "\(what): error.code", sourceLocation: sourceLocation)
    }
    #expect(!body.error.message.isEmpty, "\(what): error.message is empty", sourceLocation: sourceLocation)
    #expect(body.error.field == field, "\(what): error.field", sourceLocation: sourceLocation)
}
