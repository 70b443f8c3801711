import Foundation
import NotifyModels
import NotifyOutbound
import NotifyTestSupport
import Testing

@testable import PushDispatchCore

/// WNS against an endpoint in the test process: the client-credentials token, the toast, raw and clearing requests, and
/// what each answer comes to.
@Suite("WNS client")
struct WNSClientTests {
    static let packageSid = "ms-app://s-1-15-2-2972962901-2322836549-3722629029-1345238579"
    static let clientSecret = "Vex8L9WOFZuj95euaLrvSH7XyoDhLJc7/+=&"

    func credentials(on server: LoopbackHTTPServer) -> WNSCredentials {
        WNSCredentials(packageSid: Self.packageSid, clientSecret: Self.clientSecret, tokenURL: "\(server.baseURL)/accesstoken.srf")
    }

    /// A token endpoint granting `EgAcAQMAAAAALYAAY1.1`, `.2`, ... valid `expiresIn` seconds; the channel answering with `notify`.
    static func answering(expiresIn: Int = 86_400, notify: @escaping @Sendable (LoopbackHTTPServer.Request) -> LoopbackHTTPServer.Response)
        -> @Sendable (LoopbackHTTPServer.Request) -> LoopbackHTTPServer.Response
    {
        let granted = AnswersInTurn((1...20).map {
            LoopbackHTTPServer.Response(status: 200, json: #"{"token_type":"bearer","access_token":"EgAcAQMAAAAALYAAY1.\#($0)","expires_in":\#(expiresIn)}"#)
        })
        return { request in request.uri == "/accesstoken.srf" ? granted.next() : notify(request) }
    }

    /// A job whose channel URI is on `server`.
    func job(on server: LoopbackHTTPServer, isAlert: Bool = true, kind: ChangeKind = .created) -> PushJob {
        PushJob.fixture(
            .wns, deviceToken: "\(server.baseURL)/w/?token=AwYAAAD", kind: kind, isAlert: isAlert,
            payload: isAlert ? #"<toast launch="notifyId=1"><visual><binding template="ToastGeneric"><text>Hi</text></binding></visual></toast>"# : #"{"notify":{}}"#)
    }

    private func token(_ client: WNSClient, _ credentials: WNSCredentials) async throws -> String {
        try await client.accessToken(for: credentials).get()
    }

    @Test("the token request: the package SID and client secret as OAuth client credentials for notify.windows.com")
    func tokenRequest() async throws {
        try await withLoopbackProvider(answering: Self.answering { _ in .init(status: 200) }) { server, http in
            let client = WNSClient(http: http, tokens: AccessTokenCache())
            #expect(try await token(client, credentials(on: server)) == "EgAcAQMAAAAALYAAY1.1")
            let request = try #require(server.requests.first)
            #expect(request.method == "POST")
            #expect(request.uri == "/accesstoken.srf")
            #expect(request.header("content-type") == "application/x-www-form-urlencoded")
            #expect(String(decoding: request.body, as: UTF8.self) == [
                "grant_type=client_credentials", "client_id=ms-app%3A%2F%2Fs-1-15-2-2972962901-2322836549-3722629029-1345238579",
                "client_secret=Vex8L9WOFZuj95euaLrvSH7XyoDhLJc7%2F%2B%3D%26", "scope=notify.windows.com",
            ].joined(separator: "&"))
        }
    }

    @Test("the token is cached; one WNS refused is forgotten, and one near its expiry replaced")
    func tokenCachedAndRefreshed() async throws {
        try await withLoopbackProvider(answering: Self.answering { _ in .init(status: 200) }) { server, http in
            let client = WNSClient(http: http, tokens: AccessTokenCache())
            let credentials = credentials(on: server)
            let first = try await token(client, credentials)
            #expect(try await token(client, credentials) == first)
            client.invalidate(first, of: credentials)
            #expect(try await token(client, credentials) == "EgAcAQMAAAAALYAAY1.2")
            client.invalidate(first, of: credentials)
            #expect(try await token(client, credentials) == "EgAcAQMAAAAALYAAY1.2", "forgetting an older token keeps the current one")
        }
        try await withLoopbackProvider(answering: Self.answering(expiresIn: 1) { _ in .init(status: 200) }) { server, http in
            let client = WNSClient(http: http, tokens: AccessTokenCache())
            let credentials = credentials(on: server)
            let tokens = [try await token(client, credentials), try await token(client, credentials)]
            #expect(tokens == ["EgAcAQMAAAAALYAAY1.1", "EgAcAQMAAAAALYAAY1.2"])
        }
    }

    @Test("an alert is a toast: POSTed to the channel URI, tagged with the notification for clearing, in its group")
    func toast() async throws {
        try await withLoopbackProvider(answering: Self.answering { _ in .init(status: 200) }) { server, http in
            let client = WNSClient(http: http, tokens: AccessTokenCache())
            var alert = job(on: server)
            #expect(await client.notify(alert, accessToken: "token-1") == .accepted(status: 200))
            alert.displayGroup = "orders"
            _ = await client.notify(alert, accessToken: "token-1")
            let requests = server.requests
            try #require(requests.count == 2)
            #expect(requests[0].method == "POST")
            #expect(requests[0].uri == "/w/?token=AwYAAAD")
            #expect(requests[0].header("authorization") == "Bearer token-1")
            #expect(requests[0].header("x-wns-type") == "wns/toast")
            #expect(requests[0].header("content-type") == "text/xml")
            #expect(requests[0].header("x-wns-tag") == alert.collapseId)
            #expect(requests[0].header("x-wns-group") == WNSClient.group)
            #expect(requests[1].header("x-wns-group") == "orders")
            let ttl = try #require(requests[0].header("x-wns-ttl").flatMap { Int($0) })
            #expect((3500...3600).contains(ttl), "the seconds left until the job expires")
            #expect(requests[0].body == Array(alert.payload.utf8))
        }
    }

    @Test("X-WNS-Priority follows the notification's priority: high 1, low 3, none 4 (a shoulder tap, sent low, 3)")
    func priority() async throws {
        try await withLoopbackProvider(answering: Self.answering { _ in .init(status: 200) }) { server, http in
            let client = WNSClient(http: http, tokens: AccessTokenCache())
            for priority in [NotificationPriority.high, .low, .none] {
                var alert = job(on: server)
                alert.priority = priority
                _ = await client.notify(alert, accessToken: "token-1")
            }
            var tap = job(on: server, isAlert: false)
            tap.priority = .low
            _ = await client.notify(tap, accessToken: "token-1")
            #expect(server.requests.map { $0.header("x-wns-priority") } == ["1", "3", "4", "3"])
        }
    }

    @Test("a shoulder tap is a raw notification, untagged")
    func raw() async throws {
        try await withLoopbackProvider(answering: Self.answering { _ in .init(status: 200) }) { server, http in
            let tap = job(on: server, isAlert: false)
            _ = await WNSClient(http: http, tokens: AccessTokenCache()).notify(tap, accessToken: "token-1")
            let request = try #require(server.requests.first)
            #expect(request.header("x-wns-type") == "wns/raw")
            #expect(request.header("content-type") == "application/octet-stream")
            #expect(request.header("x-wns-tag") == nil)
            #expect(request.header("x-wns-group") == nil)
            #expect(request.body == Array(tap.payload.utf8))
        }
    }

    @Test("a change handled elsewhere clears the notification's toast: DELETE matching its tag")
    func clearToast() async throws {
        try await withLoopbackProvider(answering: Self.answering { _ in .init(status: 200) }) { server, http in
            let change = job(on: server, isAlert: false, kind: .stateChanged)
            #expect(WNSProvider.clearsToast(change))
            #expect(!WNSProvider.clearsToast(job(on: server)))
            _ = await WNSClient(http: http, tokens: AccessTokenCache()).clearToast(change, accessToken: "token-1")
            let request = try #require(server.requests.first)
            #expect(request.method == "DELETE")
            #expect(request.uri == "/w/?token=AwYAAAD")
            #expect(request.header("authorization") == "Bearer token-1")
            #expect(request.header("x-wns-match") == "type:wns/toast;tag=\(change.collapseId)")
        }
    }

    @Test("each WNS answer comes to an action, the reason its X-WNS-Error-Description", arguments: [
        (200, [(String, String)](), PushAction.accepted, nil as String?),
        (410, [("x-wns-error-description", "channel expired")], .tokenInvalid(since: nil), "channel expired"),
        (404, [], .tokenInvalid(since: nil), "HTTP 404"),
        (401, [], .credentials, "HTTP 401"),
        (406, [("retry-after", "60")], .retry(after: 60), "HTTP 406"),
        (429, [("retry-after", "120")], .retry(after: 120), "HTTP 429"),
        (503, [], .retry(after: nil), "HTTP 503"),
        (400, [("x-wns-error-description", "bad payload")], .fail, "bad payload"),
    ])
    func answers(status: Int, headers: [(String, String)], action: PushAction, reason: String?) async throws {
        let answer = LoopbackHTTPServer.Response(status: status, headers: headers.map { ($0.0, $0.1) })
        try await withLoopbackProvider(answering: Self.answering { _ in answer }) { server, http in
            let received = await WNSClient(http: http, tokens: AccessTokenCache()).notify(job(on: server), accessToken: "token-1")
            #expect(WNSAnswerClassifier.classify(received) == action)
            #expect(received.status == status)
            #expect(received.reason == reason)
        }
    }

    @Test("a token endpoint refusing the app's client credentials is the app's to fix; nothing is sent")
    func tokenRefused() async throws {
        let refused = LoopbackHTTPServer.Response(status: 400, json: #"{"error":"invalid_client","error_description":"Invalid client id"}"#)
        try await withLoopbackProvider(answering: { _ in refused }) { server, http in
            let result = await WNSClient(http: http, tokens: AccessTokenCache()).accessToken(for: credentials(on: server))
            guard case .failure(let failure) = result else {
                Issue.record("a token was granted: \(result)")
                return
            }
            #expect(failure.verdict.action == .credentials)
            #expect(failure.verdict.reason == "access token: invalid_client: Invalid client id")
        }
    }
}
