import Foundation
import NotifyModels
import NotifyTestSupport

/// A feed the provider sandbox serves at `url`: a back end the service polls (`PollIngestionTests`, `PollLeaseTests`).
struct PollFeed {
    let name = "feed-\(uniqueSuffix())"

    /// An item of a feed: a notification with an alert, for `user`.
    static func item(_ id: String, to user: String, title: String) -> NotificationRequest {
        NotificationRequest(userId: user, appNotificationId: id, payload: NotificationPayload(visualContent: VisualContent(title: title)))
    }
    var url: String { "\(Stack.sandboxURL)/feeds/\(name)" }

    struct Log: Decodable {
        var requests: Int
        var failed: Int
        var lastAuthorization: String?
    }

    /// Serves `notifications` as `{"notifications": [...]}` from now on; the next `failing` requests are answered 503;
    /// each answer comes after `delaySeconds`.
    func serve(_ notifications: [NotificationRequest], failing: Int = 0, delaySeconds: Int = 0) async throws {
        struct Document: Encodable { var notifications: [NotificationRequest] }
        let answer = try await StackClient.send(
            .PUT, "\(url)?fail=\(failing)&delay=\(delaySeconds)", json: StackClient.encode(Document(notifications: notifications)))
        guard answer.status == 204 else { throw TestFailure("PUT \(url) answered \(answer.status)") }
    }

    /// Registers this feed as the app's poll source `name`, polled every `intervalSeconds`.
    func register(as name: String, of app: TestApp, intervalSeconds: Int) async throws {
        let registered = try await StackClient.send(
            .PUT, "\(Stack.ingestURL)/v1/apps/\(app.appId)/poll-sources/\(name)", bearer: app.apiKey,
            json: StackClient.encode(PollSourceRequest(url: url, intervalSeconds: intervalSeconds)))
        guard registered.status == 201 else { throw TestFailure("PUT poll source answered \(registered.status): \(registered.text)") }
    }

    func log() async throws -> Log {
        try await StackClient.send(.GET, "\(url)/log").decode(Log.self)
    }

    /// Waits until the service asked `count` more times than `after`.
    func awaitRequests(after: Int, count: Int = 1, timeout: Duration = .seconds(30)) async throws -> Log {
        let deadline = ContinuousClock.now + timeout
        while true {
            let log = try await log()
            if log.requests >= after + count { return log }
            guard ContinuousClock.now < deadline else { throw TestFailure("the feed was asked \(log.requests - after) times within \(timeout)") }
            try await Task.sleep(for: .milliseconds(200))
        }
    }
}
