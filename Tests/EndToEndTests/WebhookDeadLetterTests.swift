import Foundation
import NotifyModels
import NotifyTestSupport
import NotifyWire
import Testing

extension EndToEndTests {
    /// Webhook events their receiver does not take: retried, then `webhooks.deliveries.dead`.
    @Suite("webhook events that end in the dead-letter queue")
    struct WebhookDeadLetterTests {
        /// `NOTIFY_WEBHOOK_MAX_ATTEMPTS` as the stack runs with it (deploy/local/test.sh sets a small one), else its default.
        private static let maximumAttempts = ProcessInfo.processInfo.environment["NOTIFY_WEBHOOK_MAX_ATTEMPTS"].flatMap { Int($0) } ?? 8

        private struct DeliveryLog: Decodable {
            var deliveries: [WebhookAttempt]
        }

        /// An app whose webhook is a new sandbox receiver answering `status` to its first `failures` POSTs; the
        /// receiver's URL.
        private static func app(failing failures: Int, with status: Int) async throws -> (app: TestApp, receiver: String) {
            let app = try await TestApp.create()
            let receiver = "\(Stack.sandboxURL)/receivers/dead-\(uniqueSuffix())"
            #expect(try await StackClient.send(.PUT, "\(receiver)?fail=\(failures)&status=\(status)").status == 204)
            let put = try await StackClient.send(
                .PUT, "\(Stack.ingestURL)/v1/apps/\(app.appId)/webhook", bearer: app.apiKey, json: StackClient.encode(WebhookRequest(url: receiver)))
            #expect(put.status == 201, "\(put.text)")
            return (app, receiver)
        }

        /// The app's webhook delivery log, polled until `done` holds or 30 s passed.
        private static func attempts(of app: TestApp, until done: ([WebhookAttempt]) -> Bool) async throws -> [WebhookAttempt] {
            let deadline = ContinuousClock.now + .seconds(30)
            while true {
                let answer = try await StackClient.send(.GET, "\(Stack.ingestURL)/v1/apps/\(app.appId)/webhook/deliveries", bearer: app.apiKey)
                guard answer.status == 200 else { throw TestFailure("GET .../webhook/deliveries answered \(answer.status): \(answer.text)") }
                let attempts = try answer.decode(DeliveryLog.self).deliveries.sorted { $0.attempt < $1.attempt }
                if done(attempts) || ContinuousClock.now >= deadline { return attempts }
                try await Task.sleep(for: .milliseconds(200))
            }
        }

        /// Registers a device of a new user in `app` (its `subscription.created` event goes to the webhook) and answers
        /// the app's events found in `webhooks.deliveries.dead`, with their `x-notify-reason`, within 30 s.
        private static func deadEventOfRegistration(in app: TestApp) async throws -> [(event: WebhookDelivery, reason: String?)] {
            try await Broker.deadLetters(of: WebhookDelivery.queue, timeout: .seconds(30), whilst: {
                _ = try await app.registerDevice(of: "user-\(uniqueSuffix())")
            }) { delivery in
                // A letter of another app (or one an earlier run left) is not this test's.
                [try? WebhookDelivery(delivery)].compactMap { $0 }.filter { $0.appId == app.appId }
            }.map { (event: $0.item, reason: $0.reason) }
        }

        @Test("a receiver that keeps answering 503: the event is tried NOTIFY_WEBHOOK_MAX_ATTEMPTS times, then is in webhooks.deliveries.dead, and its delivery log ends in failed",
              .timeLimit(.minutes(2)))
        func failingReceiverDeadLetters() async throws {
            let attempts = Self.maximumAttempts
            let (app, receiver) = try await Self.app(failing: 1000, with: 503)
            let dead = try await Self.deadEventOfRegistration(in: app)

            #expect(dead.map(\.event.type) == ["subscription.created"], "the event was dead-lettered once")
            #expect(dead.first?.reason?.hasPrefix("webhook answered 503 after \(attempts) attempts") == true, "reason: \(dead.first?.reason ?? "none")")
            let log = try await Self.attempts(of: app) { $0.count >= attempts }
            #expect(log.map(\.attempt) == Array(1...attempts))
            #expect(log.map(\.result) == Array(repeating: "retrying", count: attempts - 1) + ["failed"])
            #expect(log.allSatisfy { $0.status == 503 && $0.eventId == dead.first?.event.eventId })
            let received = try await WebhookReceiver.log(at: receiver)
            #expect(received.failed == attempts && received.received.isEmpty, "the receiver was POSTed \(received.failed ?? 0) times")
        }

        @Test("a 4xx other than 408 and 429 dead-letters the event at once: one attempt, logged failed", arguments: [400, 404, 410])
        func clientErrorDeadLettersAtOnce(status: Int) async throws {
            let (app, receiver) = try await Self.app(failing: 1000, with: status)
            let dead = try await Self.deadEventOfRegistration(in: app)

            #expect(dead.map(\.event.type) == ["subscription.created"])
            #expect(dead.first?.reason?.hasPrefix("webhook answered \(status) after 1 attempts") == true, "reason: \(dead.first?.reason ?? "none")")
            let log = try await Self.attempts(of: app) { !$0.isEmpty }
            #expect(log.map(\.result) == ["failed"] && log.first?.status == status)
            try await Task.sleep(for: .seconds(1))
            #expect(try await WebhookReceiver.log(at: receiver).failed == 1, "not tried again")
        }

        @Test("408 and 429 are retried, not dead-lettered: the next attempt delivers the event", arguments: [408, 429])
        func retriedClientErrors(status: Int) async throws {
            let (app, receiver) = try await Self.app(failing: 1, with: status)
            _ = try await app.registerDevice(of: "user-\(uniqueSuffix())")

            let log = try await Self.attempts(of: app) { $0.contains { $0.result != "retrying" } }
            #expect(log.map(\.result) == ["retrying", "delivered"])
            #expect(log.map(\.status) == [status, 204])
            #expect(try await WebhookReceiver.log(at: receiver).received.count == 1)
        }
    }
}
