import Foundation
import NotifyModels
import NotifyTestSupport
import Testing

/// A device's calls for one user (user token): changes since a cursor, history, one notification, state changes.
struct UserClient: Sendable {
    var app: TestApp
    var userId: String
    var token: String

    init(app: TestApp, userId: String) async throws {
        self.app = app
        self.userId = userId
        self.token = try await app.userToken(userId)
    }

    /// A page of history as `GET /v1/me/notifications` answers it.
    struct HistoryPage: Decodable, Sendable {
        var notifications: [NotificationView]
        var nextPageToken: String?
    }

    /// `GET /v1/me/notifications/changes` with the raw query (e.g. `cursor=...&limit=7`), answered as it comes.
    func changesAnswer(query: String = "") async throws -> HTTPAnswer {
        try await StackClient.send(.GET, "\(Stack.ingestURL)/v1/me/notifications/changes\(query.isEmpty ? "" : "?" + query)", bearer: token)
    }

    /// One page of changes after `cursor` (nil: from the start); throws unless 200.
    func changes(after cursor: String?, limit: Int? = nil) async throws -> ChangePage {
        var items: [String] = []
        if let cursor { items.append("cursor=\(cursor)") }
        if let limit { items.append("limit=\(limit)") }
        let answer = try await changesAnswer(query: items.joined(separator: "&"))
        guard answer.status == 200 else { throw TestFailure("GET changes answered \(answer.status): \(answer.text)") }
        return try answer.decode(ChangePage.self)
    }

    /// Every change after `cursor`, page by page until `hasMore` is false; returns the changes and the last cursor.
    func allChanges(after cursor: String?, limit: Int? = nil) async throws -> (changes: [NotificationChange], cursor: String) {
        var cursor = cursor
        var all: [NotificationChange] = []
        while true {
            let page = try await changes(after: cursor, limit: limit)
            all += page.changes
            cursor = page.cursor
            if !page.hasMore { return (all, page.cursor) }
        }
    }

    /// Reads changes after `cursor` until `done` holds for what was read or the timeout passes; returns what was read.
    func waitForChanges(
        after cursor: String?, timeout: Duration = .seconds(20), until done: ([NotificationChange]) -> Bool
    ) async throws -> [NotificationChange] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let changes = try await allChanges(after: cursor).changes
            if done(changes) || ContinuousClock.now >= deadline { return changes }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// The cursor that is current now (after every change stored so far).
    func currentCursor() async throws -> String {
        try await allChanges(after: nil, limit: 1000).cursor
    }

    /// The first page of history (with an optional raw query).
    func history(query: String = "") async throws -> HistoryPage {
        let answer = try await StackClient.send(.GET, "\(Stack.ingestURL)/v1/me/notifications\(query.isEmpty ? "" : "?" + query)", bearer: token)
        guard answer.status == 200 else { throw TestFailure("GET /v1/me/notifications answered \(answer.status): \(answer.text)") }
        return try answer.decode(HistoryPage.self)
    }

    /// `GET /v1/me/notifications/{id}`.
    func notification(_ id: String) async throws -> HTTPAnswer {
        try await StackClient.send(.GET, "\(Stack.ingestURL)/v1/me/notifications/\(id)", bearer: token)
    }

    /// `PATCH /v1/me/notifications/{id}` with any body, as the device `subscriptionId` (if given).
    func patch(_ id: String, _ body: some Encodable, from subscriptionId: String? = nil) async throws -> HTTPAnswer {
        try await StackClient.send(
            .PATCH, "\(Stack.ingestURL)/v1/me/notifications/\(id)", bearer: token, json: StackClient.encode(body),
            headers: subscriptionId.map { ["X-Subscription-Id": $0] } ?? [:])
    }

    /// PATCHes and expects 200 (applied) or 202 (queued); throws otherwise.
    func patchAccepted(_ id: String, _ body: StateChangeRequest, from subscriptionId: String? = nil) async throws {
        let answer = try await patch(id, body, from: subscriptionId)
        guard answer.status == 200 || answer.status == 202 else {
            throw TestFailure("PATCH /v1/me/notifications/\(id) answered \(answer.status): \(answer.text)")
        }
    }

    /// `DELETE /v1/me/notifications/{id}`.
    func delete(_ id: String, from subscriptionId: String? = nil) async throws -> HTTPAnswer {
        try await StackClient.send(
            .DELETE, "\(Stack.ingestURL)/v1/me/notifications/\(id)", bearer: token,
            headers: subscriptionId.map { ["X-Subscription-Id": $0] } ?? [:])
    }
}

extension TestApp {
    func user(_ userId: String) async throws -> UserClient {
        try await UserClient(app: self, userId: userId)
    }

    /// A call by the app server (API key, by default this app's) on a path under `/v1/apps/{appId}` (by default this app's).
    func appServer(_ method: StackClient.Method, _ path: String, json: Data? = nil, apiKey: String? = nil, appId: String? = nil) async throws -> HTTPAnswer {
        try await StackClient.send(method, "\(Stack.ingestURL)/v1/apps/\(appId ?? self.appId)\(path)", bearer: apiKey ?? self.apiKey, json: json)
    }
}

/// Sequence numbers of changes, for messages.
func describe(_ changes: [NotificationChange]) -> String {
    changes.map { "\($0.sequence):\($0.kind.rawValue):\($0.notification.id.uuidString.lowercased().prefix(8))" }.joined(separator: ", ")
}
