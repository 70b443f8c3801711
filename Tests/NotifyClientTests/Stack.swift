import Foundation
import NotifyClient
import NotifyModels
import Synchronization
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The running stack these tests talk to (deploy/local/services.sh), and the app-server side of it.
enum Stack {
    static let ingestURL = URL(string: ProcessInfo.processInfo.environment["NOTIFY_INGEST_URL"] ?? "http://127.0.0.1:21080")!
    static let adminToken = ProcessInfo.processInfo.environment["NOTIFY_ADMIN_TOKEN"] ?? "local-admin-token"
    /// A port nothing listens on: requests fail at once as when offline.
    static let deadURL = URL(string: "http://127.0.0.1:1")!

    struct App: Decodable {
        var appId: String
        var apiKey: String
        var clientSigningKey: String
    }

    static func createApp() async throws -> App {
        let data = try await call("POST", "/v1/apps", token: adminToken, body: #"{"name":"NotifyClientTests"}"#)
        return try JSONDecoder().decode(App.self, from: data)
    }

    /// Defines an event source of the app (`policy`: open or appServer).
    static func defineEventSource(_ app: App, _ name: String, policy: String) async throws {
        _ = try await call("POST", "/v1/apps/\(app.appId)/event-sources", token: app.apiKey, body: #"{"name":"\#(name)","policy":"\#(policy)"}"#)
    }

    /// Publishes a visual notification to `userId` (shown for `displayTimeToLive` seconds, if given); answers its id.
    static func publish(_ app: App, to userId: String, title: String, displayTimeToLive: Int? = nil) async throws -> UUID {
        struct Accepted: Decodable { var id: UUID }
        let display = displayTimeToLive.map { #","displayTimeToLive":\#($0)"# } ?? ""
        let body = #"{"userId":"\#(userId)"\#(display),"payload":{"visualContent":{"title":"\#(title)","body":"test"}}}"#
        let data = try await call("POST", "/v1/apps/\(app.appId)/notifications", token: app.apiKey, body: body)
        return try JSONDecoder().decode(Accepted.self, from: data).id
    }

    /// Publishes a visual notification to every member of `source`; answers its id.
    static func broadcast(_ app: App, to source: String, title: String) async throws -> UUID {
        struct Accepted: Decodable { var id: UUID }
        let body = #"{"eventSource":"\#(source)","payload":{"visualContent":{"title":"\#(title)","body":"test"}}}"#
        let data = try await call("POST", "/v1/apps/\(app.appId)/notifications", token: app.apiKey, body: body)
        return try JSONDecoder().decode(Accepted.self, from: data).id
    }

    /// The notification as the app server reads it; nil while storage has not applied it (or it is gone).
    static func notification(_ app: App, _ id: UUID) async throws -> NotificationView? {
        do {
            let data = try await call("GET", "/v1/apps/\(app.appId)/notifications/\(id.uuidString.lowercased())", token: app.apiKey)
            return try WireCoding.makeDecoder().decode(NotificationView.self, from: data)
        } catch let error as HTTPFailure where error.status == 404 {
            return nil
        }
    }

    /// Every change of the user's notifications, read directly from the service (not through the client).
    static func allChanges(_ app: App, userId: String) async throws -> [NotificationChange] {
        let data = try await call("GET", "/v1/me/notifications/changes?limit=1000", token: try await userToken(app, userId))
        return try WireCoding.makeDecoder().decode(ChangePage.self, from: data).changes
    }

    /// An HS256 user token: `sub` = userId, `aud` = appId, `exp` = now + `lifetime` (negative: expired).
    static func userToken(_ app: App, _ userId: String, lifetime: TimeInterval = 3600) async throws -> String {
        try await UserToken.mint(userId: userId, appId: app.appId, signingKey: app.clientSigningKey, lifetime: lifetime)
    }

    struct HTTPFailure: Error, CustomStringConvertible {
        var status: Int
        var body: String
        var description: String { "HTTP \(status): \(body)" }
    }

    private static func call(_ method: String, _ path: String, token: String, body: String? = nil) async throws -> Data {
        var request = URLRequest(url: URL(string: ingestURL.absoluteString + path)!)
        request.httpMethod = method
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        if let body {
            request.httpBody = Data(body.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard (200..<300).contains(status) else { throw HTTPFailure(status: status, body: String(decoding: data, as: UTF8.self)) }
        return data
    }
}

/// Counts how often the client asked for a token.
final class TokenCounter: Sendable {
    private let count = Mutex(0)
    var calls: Int { count.withLock { $0 } }

    func next(_ token: @Sendable (Int) async throws -> String) async throws -> String {
        let call = count.withLock { value in
            value += 1
            return value
        }
        return try await token(call)
    }
}

/// A fresh storage directory for one client (several clients may share it to simulate a relaunch): under the test
/// stack's state directory (`client-tests/`, emptied by test.sh before each run), else the temporary directory.
func temporaryStorage() -> URL {
    let parent = ProcessInfo.processInfo.environment["NOTIFY_STATE_DIR"].map { URL(fileURLWithPath: $0).appending(path: "client-tests") }
        ?? FileManager.default.temporaryDirectory.appending(path: "notify-client-tests")
    return parent.appending(path: UUID().uuidString)
}

func makeClient(
    _ app: Stack.App, userId: String, storage: URL, baseURL: URL = Stack.ingestURL, counter: TokenCounter = TokenCounter()
) throws -> NotifyClient {
    try NotifyClient(
        configuration: .init(baseURL: baseURL, appId: app.appId, storageDirectory: storage),
        tokenProvider: { try await counter.next { _ in try await Stack.userToken(app, userId) } })
}

/// A random APNs device token (64 hex characters).
func randomPushToken() -> String {
    (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
}

/// Polls `body` until it answers a value or `seconds` pass.
func eventually<Value>(
    within seconds: Double = 20, _ what: String, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> Value?
) async throws -> Value {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while ContinuousClock.now < deadline {
        if let value = try await body() { return value }
        try await Task.sleep(for: .milliseconds(100))
    }
    Issue.record("timed out after \(seconds) s waiting for \(what)", sourceLocation: sourceLocation)
    throw CancellationError()
}

/// The first element of `stream` that satisfies `predicate`, or nil after `seconds`.
func first<Element: Sendable>(
    of stream: AsyncStream<Element>, within seconds: Double = 20, where predicate: @escaping @Sendable (Element) -> Bool
) async -> Element? {
    await withTaskGroup(of: Element?.self) { group in
        group.addTask {
            for await element in stream where predicate(element) { return element }
            return nil
        }
        group.addTask {
            try? await Task.sleep(for: .seconds(seconds))
            return nil
        }
        let found = await group.next() ?? nil
        group.cancelAll()
        return found
    }
}
