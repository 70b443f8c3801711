import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NotifyModels
import NotifyOutbound
import NotifyTestSupport
import Testing

@testable import PushDispatchCore

/// The RFC 8030 push message request Web Push builds, and what each push service answer comes to.
@Suite("Web Push client")
struct WebPushClientTests {
    let credentials = WebPushCredentials(vapidPrivateKey: P256.Signing.PrivateKey().pemRepresentation, subject: "mailto:push@example.com")
    let subscription = UserAgentDecryption()

    private func body(of request: HTTPClientRequest) async throws -> Data {
        var bytes = Data()
        for try await buffer in try #require(request.body) { bytes.append(contentsOf: buffer.readableBytesView) }
        return bytes
    }

    @Test("the request: POST to the endpoint, the payload encrypted for the subscription, VAPID for its origin, TTL, Urgency and Topic")
    func request() async throws {
        let job = PushJob.fixture(.webpush, deviceToken: "https://fcm.googleapis.com/fcm/send/abc", payload: #"{"title":"Hi"}"#, keys: subscription.keys)
        let client = WebPushClient(http: OutboundHTTPClient(policy: OutboundPolicy()), vapid: VAPIDSigner())
        let request = try await client.request(for: job, credentials: credentials)
        #expect(request.method == .POST)
        #expect(request.url == job.deviceToken)
        let authorization = try VAPIDSignerTests.Authorization(try #require(request.headers.first(name: "authorization")))
        #expect(authorization.claims["aud"] as? String == "https://fcm.googleapis.com")
        let ttl = try #require(request.headers.first(name: "ttl").flatMap { Int($0) })
        #expect((3500...3600).contains(ttl), "the seconds left until the job expires")
        #expect(request.headers.first(name: "urgency") == "high")
        #expect(request.headers.first(name: "topic") == WebPushClient.topic(job.notificationId))
        #expect(request.headers.first(name: "topic")?.count == 22)
        #expect(request.headers.first(name: "content-encoding") == "aes128gcm")
        #expect(request.headers.first(name: "content-type") == "application/octet-stream")
        #expect(try subscription.decrypt(try await body(of: request)) == Data(job.payload.utf8))
    }

    @Test("urgency: high only for alerts sent at high priority; low priority is low", arguments: [
        (true, NotificationPriority.high, "high"), (false, .high, "normal"), (true, .none, "normal"), (true, .low, "low"), (false, .low, "low"),
    ])
    func urgency(isAlert: Bool, priority: NotificationPriority, expected: String) {
        #expect(WebPushClient.urgency(PushJob.fixture(.webpush, isAlert: isAlert, priority: priority)) == expected)
    }

    @Test("a push that cannot be built is not sent: no keys or an endpoint that is no URL fail it, a key that cannot sign is the app's credentials")
    func unsendable() async throws {
        let client = WebPushClient(http: OutboundHTTPClient(policy: OutboundPolicy()), vapid: VAPIDSigner())
        func action(_ job: PushJob, _ credentials: WebPushCredentials) async -> PushAction? {
            do {
                _ = try await client.request(for: job, credentials: credentials)
                return nil
            } catch {
                return error.action
            }
        }
        let endpoint = "https://fcm.googleapis.com/fcm/send/abc"
        #expect(await action(PushJob.fixture(.webpush, deviceToken: endpoint), credentials) == .fail)
        #expect(await action(PushJob.fixture(.webpush, deviceToken: "no url", keys: subscription.keys), credentials) == .fail)
        let unusable = WebPushCredentials(vapidPrivateKey: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----", subject: credentials.subject)
        #expect(await action(PushJob.fixture(.webpush, deviceToken: endpoint, keys: subscription.keys), unusable) == .credentials)
    }

    @Test("each push service answer comes to an action: the reason from the JSON body, Retry-After in seconds", arguments: [
        (201, "", [(String, String)](), ProviderAnswer.accepted(status: 201), PushAction.accepted),
        (410, #"{"message":"push subscription has unsubscribed or expired."}"#, [], .rejected(
            status: 410, reason: "push subscription has unsubscribed or expired.", retryAfter: nil), .tokenInvalid(since: nil)),
        (404, "", [], .rejected(status: 404, reason: "HTTP 404", retryAfter: nil), .tokenInvalid(since: nil)),
        (403, #"{"message":"VAPID credentials do not match"}"#, [], .rejected(
            status: 403, reason: "VAPID credentials do not match", retryAfter: nil), .credentials),
        (429, "", [("retry-after", "30")], .rejected(status: 429, reason: "HTTP 429", retryAfter: 30), .retry(after: 30)),
        (503, "", [], .rejected(status: 503, reason: "HTTP 503", retryAfter: nil), .retry(after: nil)),
        (413, "", [], .rejected(status: 413, reason: "HTTP 413", retryAfter: nil), .fail),
    ])
    func answers(status: Int, body: String, headers: [(String, String)], answer: ProviderAnswer, action: PushAction) async throws {
        try await withLoopbackProvider(answering: { _ in
            LoopbackHTTPServer.Response(status: status, headers: headers.map { ($0.0, $0.1) }, body: Array(body.utf8))
        }) { server, http in
            let client = WebPushClient(http: http, vapid: VAPIDSigner())
            let job = PushJob.fixture(.webpush, deviceToken: "\(server.baseURL)/push/abc", keys: subscription.keys)
            let received = await client.send(try await client.request(for: job, credentials: credentials), of: job.appId)
            #expect(received == answer)
            #expect(WebPushAnswerClassifier.classify(received) == action)
            #expect(server.requests.map(\.uri) == ["/push/abc"])
        }
    }
}
