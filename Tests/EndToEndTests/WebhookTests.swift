import Crypto
import Foundation
import NotifyModels
import Testing

extension EndToEndTests {
    @Suite("an app's webhook")
    struct WebhookTests {
        private struct ReceiverLog: Decodable {
            struct Received: Decodable {
                var id: String?
                var timestamp: String?
                var signature: String?
                var body: String
            }
            var received: [Received]
            var failed: Int
        }

        private struct Event: Decodable {
            var id: String
            var type: String
            var appId: String
            var data: [String: String]
        }

        private struct DeliveryLog: Decodable {
            var deliveries: [WebhookAttempt]
        }

        @Test("subscriptions and memberships are POSTed signed, in order, once each: a receiver failing twice gets the first event a third time, and the log shows every attempt",
              .timeLimit(.minutes(3)))
        func signedOrderedAndRetried() async throws {
            let app = try await TestApp.create()
            let receiver = "receiver-\(uniqueSuffix())"
            let receiverURL = "\(Stack.sandboxURL)/receivers/\(receiver)"
            #expect(try await StackClient.send(.PUT, "\(receiverURL)?fail=2").status == 204)
            let put = try await StackClient.send(
                .PUT, "\(Stack.ingestURL)/v1/apps/\(app.appId)/webhook", bearer: app.apiKey, json: StackClient.encode(WebhookRequest(url: receiverURL)))
            #expect(put.status == 201, "\(put.text)")
            let secret = try #require(try put.decode(WebhookView.self).secret, "the secret is answered when the webhook is made")
            let shown = try await StackClient.send(.GET, "\(Stack.ingestURL)/v1/apps/\(app.appId)/webhook", bearer: app.apiKey)
            #expect(try shown.decode(WebhookView.self).secret == nil, "and never again")

            let defined = try await StackClient.send(
                .POST, "\(Stack.ingestURL)/v1/apps/\(app.appId)/event-sources", bearer: app.apiKey,
                json: StackClient.encode(EventSourceRequest(name: "breaking-news", policy: .open)))
            #expect(defined.status == 201)
            let user = "user-\(uniqueSuffix())"
            let device = try await app.registerSubscribedDevice(of: user)
            let token = try await app.userToken(user)
            let membership = "\(Stack.ingestURL)/v1/me/subscriptions/\(device.subscriptionId)/event-sources/breaking-news"
            #expect(try await StackClient.send(.PUT, membership, bearer: token).status == 204)
            #expect(try await StackClient.send(.DELETE, membership, bearer: token).status == 204)
            #expect(try await StackClient.send(.DELETE, "\(Stack.ingestURL)/v1/me/subscriptions/\(device.subscriptionId)", bearer: token).status == 204)

            var log = ReceiverLog(received: [], failed: 0)
            let deadline = ContinuousClock.now + .seconds(60)
            while log.received.count < 4, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(300))
                log = try await StackClient.send(.GET, receiverURL).decode(ReceiverLog.self)
            }
            #expect(log.failed == 2, "the receiver refused two POSTs")
            let events = try log.received.map { try JSONDecoder().decode(Event.self, from: Data($0.body.utf8)) }
            #expect(events.map(\.type) == ["subscription.created", "eventSource.joined", "eventSource.left", "subscription.deleted"], "in order, once each")
            #expect(events.allSatisfy { $0.appId == app.appId && $0.data["subscriptionId"] == device.subscriptionId && $0.data["userId"] == user })
            #expect(events.last?.data["reason"] == "unregistered")
            #expect(events[1].data["eventSource"] == "breaking-news")
            for received in log.received {
                let timestamp = try #require(received.timestamp)
                let mac = HMAC<SHA256>.authenticationCode(for: Data("\(timestamp).\(received.body)".utf8), using: SymmetricKey(data: Data(secret.utf8)))
                #expect(received.signature == "v1=" + mac.map { String(format: "%02x", $0) }.joined(), "the signature checks out")
                #expect(abs((Double(timestamp) ?? 0) - Date().timeIntervalSince1970) < 120, "the timestamp is now")
                #expect(received.id == (try JSONDecoder().decode(Event.self, from: Data(received.body.utf8)).id))
            }

            // The delivery log: the first event tried three times (twice retrying, then delivered), the others once.
            var attempts: [WebhookAttempt] = []
            let logDeadline = ContinuousClock.now + .seconds(20)
            while attempts.count < 6, ContinuousClock.now < logDeadline {
                try await Task.sleep(for: .milliseconds(300))
                attempts = try await StackClient.send(.GET, "\(Stack.ingestURL)/v1/apps/\(app.appId)/webhook/deliveries", bearer: app.apiKey)
                    .decode(DeliveryLog.self).deliveries
            }
            let first = attempts.filter { $0.type == "subscription.created" }.sorted { $0.attempt < $1.attempt }
            #expect(first.map(\.result) == ["retrying", "retrying", "delivered"])
            #expect(first.map(\.status) == [503, 503, 204])
            #expect(attempts.count == 6)
        }

        @Test("a webhook URL that is not http(s) is refused naming url; an app without a webhook answers 404")
        func badWebhookRefused() async throws {
            let app = try await TestApp.create()
            expectAPIError(
                try await StackClient.send(
                    .PUT, "\(Stack.ingestURL)/v1/apps/\(app.appId)/webhook", bearer: app.apiKey, json: StackClient.encode(WebhookRequest(url: "mailto:x@y"))),
                status: 400, field: "url", "a mailto URL")
            expectAPIError(
                try await StackClient.send(.GET, "\(Stack.ingestURL)/v1/apps/\(app.appId)/webhook", bearer: app.apiKey), status: 404, field: "appId",
                "no webhook")
        }
    }
}
