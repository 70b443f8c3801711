import Foundation
import NotifyModels
import Testing

extension EndToEndTests {
    @Suite("a broker that blocks its publishers")
    struct BrokerAlarmTests {
        /// Raises or clears RabbitMQ's memory alarm on the test node at once (the memory monitor would take seconds
        /// to notice a lowered watermark): the broker then stops reading from every connection that publishes.
        private static func memoryAlarm(_ raised: Bool) async throws {
            let call = raised
                ? "rabbit_alarm:set_alarm({{resource_limit, memory, node()}, []})."
                : "rabbit_alarm:clear_alarm({resource_limit, memory, node()})."
            try await Broker.ctl(["eval", call])
        }

        @Test("under a memory alarm a publish is answered 503 with Retry-After within the confirm timeout, not left hanging; published again after it, the notification is stored once")
        func memoryAlarmAnswers503() async throws {
            let app = try await TestApp.create()
            let user = try await UserClient(app: app, userId: "user-\(uniqueSuffix())")
            var request = NotificationRequest.alert(to: user.userId, title: "during the alarm")
            request.appNotificationId = "alarm-\(uniqueSuffix())"
            let url = "\(Stack.ingestURL)/v1/apps/\(app.appId)/notifications"

            try await Self.memoryAlarm(true)
            let started = ContinuousClock.now
            let blocked: HTTPAnswer
            do {
                blocked = try await StackClient.send(.POST, url, bearer: app.apiKey, json: try StackClient.encode(request), deadline: .zero)
            } catch {
                try await Self.memoryAlarm(false)
                throw error
            }
            let waited = ContinuousClock.now - started
            try await Self.memoryAlarm(false)

            expectAPIError(blocked, status: 503, code: "broker_unavailable", field: nil, "publishing while the broker blocks publishers")
            #expect(blocked.retryAfter != nil, "a 503 says when to try again")
            #expect(waited < .seconds(15), "answered within the confirm timeout (5 s, checked each second), not held until the alarm clears")

            // The app server publishes again, as a 503 asks; the first try may have been stored once the alarm cleared.
            _ = try await app.publishAccepted(request)
            // A 202 is accepted, not yet stored: the history shows it once storage applied it.
            var history = try await user.history()
            let deadline = ContinuousClock.now + .seconds(20)
            while !history.notifications.contains(where: { $0.appNotificationId == request.appNotificationId }), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(200))
                history = try await user.history()
            }
            #expect(history.notifications.filter { $0.appNotificationId == request.appNotificationId }.count == 1)
        }
    }
}
