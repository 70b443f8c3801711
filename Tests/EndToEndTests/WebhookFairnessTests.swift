import Foundation
import NotifyModels
import Testing

extension EndToEndTests {
    /// One app's webhook receiver that never answers, beside another app's that does.
    @Suite("webhooks among apps")
    struct WebhookFairnessTests {
        private struct ReceiverLog: Decodable {
            struct Received: Decodable {
                var body: String
            }
            var received: [Received]
            var arrived: Int?
        }

        /// An app whose webhook is a sandbox receiver set up with `query` (e.g. `delay=30`); answers the app and the
        /// receiver's URL.
        private static func appWithReceiver(_ query: String = "") async throws -> (TestApp, String) {
            let app = try await TestApp.create()
            let receiverURL = "\(Stack.sandboxURL)/receivers/fair-\(uniqueSuffix())"
            #expect(try await StackClient.send(.PUT, "\(receiverURL)?\(query)").status == 204)
            let put = try await StackClient.send(
                .PUT, "\(Stack.ingestURL)/v1/apps/\(app.appId)/webhook", bearer: app.apiKey, json: StackClient.encode(WebhookRequest(url: receiverURL)))
            #expect(put.status == 201, "\(put.text)")
            return (app, receiverURL)
        }

        @Test("an app whose receiver never answers does not hold another app's events, and gets no attempt once deleted",
              .timeLimit(.minutes(3)))
        func deadReceiverHoldsOnlyItsApp() async throws {
            // Every POST to it hangs 30 s: each attempt times out after 10 s.
            let (stuck, stuckReceiver) = try await Self.appWithReceiver("delay=30")
            // 80 events: more than push-dispatch takes from the queue at once (64), all behind the first attempt's 30 s.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<80 {
                    if index >= 8 { try await group.next() }
                    group.addTask { _ = try await stuck.registerDevice(of: "stuck-\(index)-\(uniqueSuffix())") }
                }
                try await group.waitForAll()
            }
            var stuckLog = try await StackClient.send(.GET, stuckReceiver).decode(ReceiverLog.self)
            let arrivalDeadline = ContinuousClock.now + .seconds(30)
            while (stuckLog.arrived ?? 0) == 0, ContinuousClock.now < arrivalDeadline {
                try await Task.sleep(for: .milliseconds(200))
                stuckLog = try await StackClient.send(.GET, stuckReceiver).decode(ReceiverLog.self)
            }
            #expect((stuckLog.arrived ?? 0) >= 1, "the stuck app's first event was attempted")

            // The other app's event arrives while the stuck app's attempts hang (before, it waited for all of them).
            let (quiet, quietReceiver) = try await Self.appWithReceiver()
            let registered = ContinuousClock.now
            _ = try await quiet.registerDevice(of: "quiet-\(uniqueSuffix())")
            var quietLog = ReceiverLog(received: [], arrived: 0)
            while quietLog.received.isEmpty, ContinuousClock.now - registered < .seconds(60) {
                try await Task.sleep(for: .milliseconds(200))
                quietLog = try await StackClient.send(.GET, quietReceiver).decode(ReceiverLog.self)
            }
            let waited = ContinuousClock.now - registered
            #expect(quietLog.received.count == 1, "the other app's subscription.created arrived")
            // Behind the stuck app's events it would wait minutes, or until an attempt's 10 s timeout while they filled the
            // prefetch: it arrives within a few seconds.
            #expect(waited < .seconds(3), "the other app's event waited \(waited)")

            // Deleting the stuck app: the attempt under way ends (at most 10 s), and no other follows.
            #expect(try await StackClient.send(.DELETE, "\(Stack.ingestURL)/v1/apps/\(stuck.appId)", bearer: Stack.adminToken).status == 204)
            try await Task.sleep(for: .seconds(12))
            let afterDeletion = try await StackClient.send(.GET, stuckReceiver).decode(ReceiverLog.self).arrived ?? 0
            try await Task.sleep(for: .seconds(15))
            let later = try await StackClient.send(.GET, stuckReceiver).decode(ReceiverLog.self).arrived ?? 0
            #expect(later == afterDeletion, "attempts went on for a deleted app: \(afterDeletion) then \(later)")
        }
    }
}
