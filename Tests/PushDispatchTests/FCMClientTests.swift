import Foundation
import NotifyModels
import NotifyOutbound
import NotifyTestSupport
import Testing
import _CryptoExtras

@testable import PushDispatchCore

/// FCM HTTP v1 against an endpoint in the test process: the OAuth assertion and token, the send request, and what each
/// answer comes to.
@Suite("FCM client")
struct FCMClientTests {
    static let project = "notify-test"
    static let sendPath = "/v1/projects/\(project)/messages:send"

    let key: _RSA.Signing.PrivateKey

    init() throws {
        key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
    }

    /// The service account of these tests, its token endpoint and FCM itself on `server`.
    func credentials(on server: LoopbackHTTPServer) -> FCMCredentials {
        FCMCredentials(
            serviceAccount: .init(
                projectId: Self.project, privateKeyId: "key-1", privateKey: key.pkcs8PEMRepresentation,
                clientEmail: "notify@notify-test.iam.gserviceaccount.com", tokenUri: "\(server.baseURL)/token"),
            endpoint: server.baseURL)
    }

    /// A token endpoint granting `ya29.1`, `ya29.2`, ... valid `expiresIn` seconds, and FCM answering with `send`.
    static func answering(expiresIn: Int = 3600, send: @escaping @Sendable (LoopbackHTTPServer.Request) -> LoopbackHTTPServer.Response)
        -> @Sendable (LoopbackHTTPServer.Request) -> LoopbackHTTPServer.Response
    {
        let granted = AnswersInTurn((1...20).map {
            LoopbackHTTPServer.Response(status: 200, json: #"{"access_token":"ya29.\#($0)","expires_in":\#(expiresIn),"token_type":"Bearer"}"#)
        })
        return { request in request.uri == "/token" ? granted.next() : send(request) }
    }

    static func fcmError(_ status: Int, _ state: String, errorCode: String? = nil) -> String {
        let details = errorCode.map { #","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"\#($0)"}]"# } ?? ""
        return #"{"error":{"code":\#(status),"message":"refused","status":"\#(state)"\#(details)}}"#
    }

    /// A JWT segment's JSON object.
    static func json(_ segment: String) throws -> [String: Any] {
        let data = try #require(Base64URLCoding.decode(segment))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    func provider(_ http: OutboundHTTPClient, on server: LoopbackHTTPServer) -> FCMProvider {
        FCMProvider(client: FCMClient(http: http, tokens: AccessTokenCache()), credentials: FixedCredentials(credentials(on: server)))
    }

    @Test("a push: POST to the project's messages:send with the bearer token, the message addressed to the device with its TTL")
    func sendRequest() async throws {
        try await withLoopbackProvider(answering: Self.answering { _ in .init(status: 200, json: #"{"name":"projects/notify-test/messages/1"}"#) }) { server, http in
            let job = PushJob.fixture(.fcm, deviceToken: "fcm-registration-token", payload: #"{"data":{"notifyId":"x"},"android":{"priority":"HIGH"}}"#)
            let verdict = await provider(http, on: server).deliver(job)
            #expect(verdict.action == .accepted)
            #expect(verdict.status == 200)
            let send = try #require(server.requests.last)
            #expect(server.requests.map(\.uri) == ["/token", Self.sendPath])
            #expect(send.method == "POST")
            #expect(send.header("authorization") == "Bearer ya29.1")
            #expect(send.header("content-type") == "application/json; charset=UTF-8")
            let body = try #require(try JSONSerialization.jsonObject(with: Data(send.body)) as? [String: Any])
            let message = try #require(body["message"] as? [String: Any])
            #expect(message["token"] as? String == "fcm-registration-token")
            #expect((message["data"] as? [String: String])?["notifyId"] == "x")
            let android = try #require(message["android"] as? [String: Any])
            #expect(android["priority"] as? String == "HIGH")
            let ttl = try #require((android["ttl"] as? String).flatMap { Int($0.dropLast()) })
            #expect((3500...3600).contains(ttl), "the seconds left until the job expires")
        }
    }

    @Test("android.ttl is what is left of the job's life, at most FCM's 28 days and never below zero")
    func ttl() throws {
        func ttl(expiringIn seconds: TimeInterval) throws -> String? {
            var job = PushJob.fixture(.fcm, payload: #"{"android":{}}"#)
            let now = Date()
            job.expiration = now.addingTimeInterval(seconds)
            let body = try JSONSerialization.jsonObject(with: try FCMClient.body(job, now: now)) as? [String: [String: Any]]
            return (body?["message"]?["android"] as? [String: Any])?["ttl"] as? String
        }
        #expect(try ttl(expiringIn: 90) == "90s")
        #expect(try ttl(expiringIn: 60 * 86_400) == "2419200s")
        #expect(try ttl(expiringIn: -5) == "0s")
        #expect(throws: UnsendablePush.self) { try FCMClient.body(PushJob.fixture(.fcm, payload: "[1, 2]")) }
    }

    @Test("webpush's TTL header is counted as android.ttl is; its other headers and fcm_options pass unchanged")
    func webPushTTL() throws {
        var job = PushJob.fixture(
            .fcm, payload: #"{"android":{},"webpush":{"headers":{"Urgency":"high","TTL":"600"},"fcm_options":{"link":"https://example.com/o/1"}}}"#)
        let now = Date()
        job.expiration = now.addingTimeInterval(90)
        let body = try JSONSerialization.jsonObject(with: try FCMClient.body(job, now: now)) as? [String: [String: Any]]
        let webpush = try #require(body?["message"]?["webpush"] as? [String: Any])
        #expect(webpush["headers"] as? [String: String] == ["Urgency": "high", "TTL": "90"])
        #expect(webpush["fcm_options"] as? [String: String] == ["link": "https://example.com/o/1"])
    }

    @Test("the token request is a JWT-bearer grant whose assertion the service account signed (RS256) for the FCM scope")
    func assertion() async throws {
        try await withLoopbackProvider(answering: Self.answering { _ in .init(status: 200) }) { server, http in
            let before = Date().timeIntervalSince1970.rounded(.down)
            _ = await provider(http, on: server).deliver(PushJob.fixture(.fcm))
            let tokenRequest = try #require(server.requests.first)
            #expect(tokenRequest.method == "POST")
            #expect(tokenRequest.header("content-type") == "application/x-www-form-urlencoded")
            var form: [String: String] = [:]
            for pair in String(decoding: tokenRequest.body, as: UTF8.self).split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? "" }
                form[parts[0]] = parts.count > 1 ? parts[1] : ""
            }
            #expect(form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer")
            let segments = try #require(form["assertion"]).split(separator: ".").map(String.init)
            try #require(segments.count == 3)
            let header = try Self.json(segments[0])
            #expect(header["alg"] as? String == "RS256")
            #expect(header["kid"] as? String == "key-1")
            let claims = try Self.json(segments[1])
            let account = credentials(on: server).serviceAccount
            #expect(claims["iss"] as? String == account.clientEmail)
            #expect(claims["aud"] as? String == account.tokenUri)
            #expect(claims["scope"] as? String == "https://www.googleapis.com/auth/firebase.messaging")
            let issuedAt = try #require(claims["iat"] as? Double)
            #expect(issuedAt >= before && issuedAt <= Date().timeIntervalSince1970)
            #expect(claims["exp"] as? Double == issuedAt + 3600)
            let signature = _RSA.Signing.RSASignature(rawRepresentation: try #require(Base64URLCoding.decode(segments[2])))
            let signed = Data("\(segments[0]).\(segments[1])".utf8)
            #expect(key.publicKey.isValidSignature(signature, for: signed, padding: .insecurePKCS1v1_5))
        }
    }

    @Test("the access token is fetched once for all the pushes that want it, and reused")
    func tokenCached() async throws {
        try await withLoopbackProvider(answering: Self.answering { _ in .init(status: 200) }) { server, http in
            let provider = provider(http, on: server)
            let attempts = await provider.deliver((0..<5).map { _ in PushJob.fixture(.fcm) }, concurrency: 5)
            #expect(attempts.map(\.verdict.action) == Array(repeating: .accepted, count: 5))
            _ = await provider.deliver(PushJob.fixture(.fcm))
            #expect(server.requests.filter { $0.uri == "/token" }.count == 1)
            #expect(Set(server.requests.filter { $0.uri == Self.sendPath }.map { $0.header("authorization") }) == ["Bearer ya29.1"])
        }
    }

    @Test("a token the endpoint could not grant is not kept: the next push asks again")
    func failedTokenNotCached() async throws {
        let tokens = AnswersInTurn([
            .init(status: 503),
            .init(status: 200, json: #"{"access_token":"ya29.after","expires_in":3600,"token_type":"Bearer"}"#),
        ])
        try await withLoopbackProvider(answering: { request in request.uri == "/token" ? tokens.next() : .init(status: 200) }) { server, http in
            let provider = provider(http, on: server)
            let first = await provider.deliver(PushJob.fixture(.fcm))
            let second = await provider.deliver(PushJob.fixture(.fcm))
            #expect(first.action == .retry(after: nil))
            #expect(second.action == .accepted)
            #expect(server.requests.map(\.uri) == ["/token", "/token", Self.sendPath])
        }
    }

    @Test("a token near its expiry is replaced before the next push")
    func tokenRefreshedNearExpiry() async throws {
        // Valid 1 s: used until half its life at most, so every push asks for a new one.
        try await withLoopbackProvider(answering: Self.answering(expiresIn: 1) { _ in .init(status: 200) }) { server, http in
            let provider = provider(http, on: server)
            _ = await provider.deliver(PushJob.fixture(.fcm))
            _ = await provider.deliver(PushJob.fixture(.fcm))
            #expect(server.requests.filter { $0.uri == Self.sendPath }.map { $0.header("authorization") } == ["Bearer ya29.1", "Bearer ya29.2"])
        }
    }

    @Test("a token FCM refuses (401) is replaced once and the push sent again; refused again, the app's credentials are at fault")
    func refusedTokenRenewedOnce() async throws {
        let unauthenticated = LoopbackHTTPServer.Response(status: 401, json: Self.fcmError(401, "UNAUTHENTICATED"))
        let onceRefused = AnswersInTurn([unauthenticated, .init(status: 200)])
        try await withLoopbackProvider(answering: Self.answering { _ in onceRefused.next() }) { server, http in
            let verdict = await provider(http, on: server).deliver(PushJob.fixture(.fcm))
            #expect(verdict.action == .accepted)
            #expect(server.requests.map(\.uri) == ["/token", Self.sendPath, "/token", Self.sendPath])
            #expect(server.requests.last?.header("authorization") == "Bearer ya29.2")
        }
        try await withLoopbackProvider(answering: Self.answering { _ in unauthenticated }) { server, http in
            let verdict = await provider(http, on: server).deliver(PushJob.fixture(.fcm))
            #expect(verdict.action == .credentials)
            #expect(verdict.status == 401)
            #expect(server.requests.filter { $0.uri == Self.sendPath }.count == 2)
        }
    }

    @Test("a token endpoint refusing the service account is the app's to fix; one that fails is tried again later", arguments: [
        (LoopbackHTTPServer.Response(status: 400, json: #"{"error":"invalid_grant","error_description":"Invalid JWT Signature."}"#),
         PushAction.credentials, "access token: invalid_grant: Invalid JWT Signature."),
        (LoopbackHTTPServer.Response(status: 503, headers: [("retry-after", "10")]), .retry(after: 10), "access token: HTTP 503"),
        (LoopbackHTTPServer.Response(status: 200, json: #"{"token_type":"Bearer"}"#), .retry(after: nil),
         "access token: the token endpoint answered no access token"),
    ])
    func tokenRefused(answer: LoopbackHTTPServer.Response, action: PushAction, reason: String) async throws {
        try await withLoopbackProvider(answering: { request in request.uri == "/token" ? answer : .init(status: 200) }) { server, http in
            let verdict = await provider(http, on: server).deliver(PushJob.fixture(.fcm))
            #expect(verdict.action == action)
            #expect(verdict.reason == reason)
            #expect(server.requests.map(\.uri) == ["/token"], "nothing is sent without a token")
        }
    }

    @Test("each FCM answer comes to an action, the reason its errorCode (else its status)", arguments: [
        (404, FCMClientTests.fcmError(404, "NOT_FOUND", errorCode: "UNREGISTERED"), [(String, String)](), PushAction.tokenInvalid(since: nil), "UNREGISTERED"),
        (403, FCMClientTests.fcmError(403, "PERMISSION_DENIED", errorCode: "SENDER_ID_MISMATCH"), [], .tokenInvalid(since: nil), "SENDER_ID_MISMATCH"),
        (403, FCMClientTests.fcmError(403, "PERMISSION_DENIED"), [], .credentials, "PERMISSION_DENIED"),
        (400, FCMClientTests.fcmError(400, "INVALID_ARGUMENT", errorCode: "INVALID_ARGUMENT"), [], .fail, "INVALID_ARGUMENT"),
        (429, FCMClientTests.fcmError(429, "RESOURCE_EXHAUSTED", errorCode: "QUOTA_EXCEEDED"), [("retry-after", "120")], .retry(after: 120), "QUOTA_EXCEEDED"),
        (429, FCMClientTests.fcmError(429, "RESOURCE_EXHAUSTED", errorCode: "QUOTA_EXCEEDED"), [("retry-after", "5")], .retry(after: 60), "QUOTA_EXCEEDED"),
        (503, FCMClientTests.fcmError(503, "UNAVAILABLE", errorCode: "UNAVAILABLE"), [("retry-after", "7")], .retry(after: 7), "UNAVAILABLE"),
        (500, "<html>oops</html>", [], .retry(after: nil), "HTTP 500"),
    ])
    func answers(status: Int, body: String, headers: [(String, String)], action: PushAction, reason: String) async throws {
        let answer = LoopbackHTTPServer.Response(status: status, headers: headers.map { ($0.0, $0.1) }, json: body)
        try await withLoopbackProvider(answering: Self.answering { _ in answer }) { server, http in
            let verdict = await provider(http, on: server).deliver(PushJob.fixture(.fcm))
            #expect(verdict.action == action)
            #expect(verdict.status == status)
            #expect(verdict.reason == reason)
        }
    }
}
