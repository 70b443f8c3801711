import Foundation
import NotifyModels
import Testing

extension EndToEndTests {
    @Suite("per-app publish rate limits")
    struct RateLimitTests {
        private struct Settings: Codable {
            var rateLimit: RateLimit?
        }

        @Test("over its requests/s an app is answered 429 with Retry-After and nothing is accepted; a second later it publishes again")
        func requestsLimit() async throws {
            let app = try await TestApp.create()
            let user = try await UserClient(app: app, userId: "user-\(uniqueSuffix())")
            let set = try await StackClient.send(
                .PATCH, "\(Stack.ingestURL)/v1/apps/\(app.appId)", bearer: Stack.adminToken,
                json: StackClient.encode(Settings(rateLimit: RateLimit(requestsPerSecond: 2))))
            #expect(set.status == 200, "\(set.text)")
            #expect(try set.decode(Settings.self).rateLimit == RateLimit(requestsPerSecond: 2))

            let url = "\(Stack.ingestURL)/v1/apps/\(app.appId)/notifications"
            var answers: [HTTPAnswer] = []
            for index in 0..<6 {
                let body = try StackClient.encode(NotificationRequest.alert(to: user.userId, title: "burst \(index)"))
                answers.append(try await StackClient.send(.POST, url, bearer: app.apiKey, json: body, deadline: .zero))
            }
            let limited = answers.filter { $0.status == 429 }
            #expect(!limited.isEmpty, "6 requests at once against 2/s: \(answers.map(\.status))")
            #expect(answers.allSatisfy { $0.status == 202 || $0.status == 429 })
            for answer in limited {
                expectAPIError(answer, status: 429, code: "rate_limited", field: nil, "publishing over the app's limit")
                #expect(answer.retryAfter.flatMap(Int.init).map { $0 >= 1 } == true, "Retry-After in seconds")
            }

            try await Task.sleep(for: .milliseconds(1100))
            _ = try await app.publishAccepted(.alert(to: user.userId, title: "after the wait"))
            // What was refused was not stored: the user has the accepted ones and the last.
            let accepted = answers.filter { $0.status == 202 }.count
            let changes = try await user.waitForChanges(after: nil) { $0.count >= accepted + 1 }
            try await Task.sleep(for: .milliseconds(500))
            #expect(try await user.allChanges(after: nil).changes.count == accepted + 1, "\(changes.count) changes")
        }

        /// A second ingest instance's port (the stack's ingest port + 14, clear of the other tests' and the sandbox's).
        private static let secondIngestPort = (Int(ProcessInfo.processInfo.environment["NOTIFY_INGEST_PORT"] ?? "") ?? 22080) + 14

        @Test("two ingest instances hold an app to its limit together, not each: requests spread over both get the limit's worth within 10 %",
              .timeLimit(.minutes(2)))
        func limitHoldsAcrossInstances() async throws {
            let app = try await TestApp.create()
            let userId = "user-\(uniqueSuffix())"
            let limit = 10
            let set = try await StackClient.send(
                .PATCH, "\(Stack.ingestURL)/v1/apps/\(app.appId)", bearer: Stack.adminToken,
                json: StackClient.encode(Settings(rateLimit: RateLimit(requestsPerSecond: limit))))
            #expect(set.status == 200, "\(set.text)")
            try await SecondIngest.running(port: Self.secondIngestPort, environment: [:]) { second in
                // Each instance counts the instances alive every 5 s.
                try await Task.sleep(for: .seconds(6))
                let urls = [Stack.ingestURL, second.baseURL].map { "\($0)/v1/apps/\(app.appId)/notifications" }
                let body = try StackClient.encode(NotificationRequest.alert(to: userId, title: "spread"))
                // Drain the buckets, then count what the next seconds admit, alternating between the instances.
                for url in urls + urls {
                    for _ in 0..<limit { _ = try await StackClient.send(.POST, url, bearer: app.apiKey, json: body, deadline: .zero) }
                }
                let window = Duration.seconds(4)
                let start = ContinuousClock.now
                var accepted = 0
                var turn = 0
                while ContinuousClock.now - start < window {
                    let answer = try await StackClient.send(.POST, urls[turn % 2], bearer: app.apiKey, json: body, deadline: .zero)
                    if answer.status == 202 { accepted += 1 }
                    turn += 1
                    try await Task.sleep(for: .milliseconds(5))
                }
                // The limit's worth in the window (plus the second's worth a bucket may hold), not twice it.
                let expected = Double(limit) * 4
                #expect(Double(accepted) <= (expected + Double(limit)) * 1.1, "\(accepted) accepted in 4 s at \(limit)/s over two instances")
                #expect(Double(accepted) >= expected * 0.9, "\(accepted) accepted in 4 s at \(limit)/s over two instances")
            }
        }

        @Test("a limit set through one instance holds on another at once, not when that one's cached copy of the app expires",
              .timeLimit(.minutes(2)))
        func limitHoldsOnEveryInstance() async throws {
            let app = try await TestApp.create()
            let userId = "user-\(uniqueSuffix())"
            try await SecondIngest.running(port: Self.secondIngestPort, environment: [:]) { second in
                let url = "\(second.baseURL)/v1/apps/\(app.appId)/notifications"
                func publish(_ title: String) async throws -> Int {
                    let body = try StackClient.encode(NotificationRequest.alert(to: userId, title: title))
                    return try await StackClient.send(.POST, url, bearer: app.apiKey, json: body, deadline: .zero).status
                }
                // The second instance now holds the app, with the default limit, for up to 30 s.
                #expect(try await publish("cached") == 202)
                let set = try await StackClient.send(
                    .PATCH, "\(Stack.ingestURL)/v1/apps/\(app.appId)", bearer: Stack.adminToken,
                    json: StackClient.encode(Settings(rateLimit: RateLimit(requestsPerSecond: 1))))
                #expect(set.status == 200, "\(set.text)")
                var statuses: [Int] = []
                let deadline = ContinuousClock.now + .seconds(10)
                while !statuses.contains(429), ContinuousClock.now < deadline {
                    statuses = []
                    for index in 0..<4 { statuses.append(try await publish("burst \(index)")) }
                    if !statuses.contains(429) { try await Task.sleep(for: .milliseconds(200)) }
                }
                #expect(statuses.contains(429), "4 requests at once through the other instance, against 1/s: \(statuses)")
            }
        }

        @Test("a limit out of range is refused naming the field; no setting at all is refused")
        func invalidSettings() async throws {
            let app = try await TestApp.create()
            let url = "\(Stack.ingestURL)/v1/apps/\(app.appId)"
            let zero = try await StackClient.send(
                .PATCH, url, bearer: Stack.adminToken, json: StackClient.encode(Settings(rateLimit: RateLimit(notificationsPerSecond: 0))))
            expectAPIError(zero, status: 400, field: "rateLimit.notificationsPerSecond", "a limit of 0")
            let empty = try await StackClient.send(.PATCH, url, bearer: Stack.adminToken, json: Data("{}".utf8))
            expectAPIError(empty, status: 400, field: "badgeMode", "no setting")
        }
    }
}
