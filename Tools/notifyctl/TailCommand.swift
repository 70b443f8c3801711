import ArgumentParser
import Foundation
import NIOCore
import NotifyModels

/// `notifyctl tail`: a user's changes as they happen, over the live stream, or an app's push outcomes as they are
/// logged; for a bounded count and time.
struct TailCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tail",
        abstract: "Follow a user's changes (--user) or an app's push outcomes (--deliveries), one line each, until --count lines or --timeout seconds.",
        discussion: """
            --user reads GET /v1/me/stream (Server-Sent Events) with a user token it mints (--app, --signing-key). A line \
            reads: cursor sequence kind notificationId readState userActionState title. The stream starts after \
            --cursor (e.g. the last cursor printed), else with every change the service keeps for the user. With \
            --json each change is printed as the stream sent it (a NotificationChange), one a line.

            --deliveries asks GET /v1/apps/{appId}/deliveries (--app, --api-key) each second for the outcomes logged \
            since the last it printed (from --since, else from now). A line reads: at notificationId subscriptionId \
            platform attempt result status reason. An outcome logged up to 10 s late (storage writes push-dispatch's \
            reports in batches) is still printed once: each round asks again from 10 s before the newest time seen \
            and skips what it printed. With --json each outcome is printed as a DeliveryRecord, one a line.
            """
    )

    @OptionGroup var options: ServiceOptions

    @Option(help: "The user whose changes to follow.")
    var user: String?

    // A base64url key begins with "-" one time in 64: it is the value, not an option.
    @Option(parsing: .unconditional, help: "The app's clientSigningKey, to mint the user's token (with --user).")
    var signingKey: String?

    @Flag(help: "Follow the app's push outcomes instead of a user's changes (API key).")
    var deliveries = false

    @Option(help: "Stop after this many lines.")
    var count = 100

    @Option(help: "Stop after this many seconds.")
    var timeout = 60

    @Option(help: "Start after this cursor (with --user).")
    var cursor: String?

    @Option(help: "Start with the outcomes at or after this time, RFC 3339 (with --deliveries; default: now).")
    var since: String?

    func validate() throws {
        guard count > 0 else { throw UsageError("--count must be positive") }
        guard timeout > 0 else { throw UsageError("--timeout must be a positive number of seconds") }
        if deliveries {
            guard user == nil, signingKey == nil, cursor == nil else { throw UsageError("--deliveries follows the app: not with --user, --signing-key or --cursor") }
            if let since, WireCoding.parseTimestamp(since) == nil { throw UsageError("--since must be an RFC 3339 time, e.g. 2026-11-24T21:00:00Z") }
        } else {
            guard user != nil, signingKey != nil else { throw UsageError("give --user and --signing-key, or --deliveries") }
            guard since == nil else { throw UsageError("--since is for --deliveries; a user's stream starts after --cursor") }
        }
    }

    func run() async throws {
        let timeout = self.timeout
        let follow: @Sendable () async throws -> Void
        if deliveries {
            let follower = DeliveryFollower(
                client: options.client, path: "/v1/apps/\(ServiceClient.escaped(try options.appId()))/deliveries", apiKey: try options.appKey(),
                count: count, printsJSON: options.json)
            let start = since.flatMap(WireCoding.parseTimestamp) ?? Date()
            follow = { try await follower.run(from: start) }
        } else if let user, let signingKey {
            let follower = StreamFollower(
                client: options.client,
                path: "/v1/me/stream" + (cursor.map { "?cursor=\(ServiceClient.escaped($0))" } ?? ""),
                token: try await UserToken.mint(userId: user, appId: try options.appId(), signingKey: signingKey, lifetime: TimeInterval(timeout + 60)),
                count: count, printsJSON: options.json)
            // The request's own deadline comes after the timeout, so that it is the timeout that ends a quiet stream.
            follow = { try await follower.run(deadline: .now() + .seconds(Int64(timeout) + 30)) }
        } else {
            return
        }
        // Whichever comes first ends the command: the last line counted, or the timeout.
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await follow() }
            group.addTask { try await Task.sleep(for: .seconds(timeout)) }
            _ = try await group.next()
            group.cancelAll()
        }
    }
}

/// Asks the app's delivery log each second for what was logged since, and prints each outcome once.
private struct DeliveryFollower: Sendable {
    /// How far before the newest outcome printed each round asks again: an outcome is logged when storage writes
    /// push-dispatch's report, so one with an earlier time can appear after a later one was listed.
    static let lookback: TimeInterval = 10

    /// An outcome: its push, attempt and result.
    private struct Key: Hashable {
        var pushId: UUID
        var attempt: Int
        var result: String
    }

    let client: ServiceClient
    let path: String
    let apiKey: String
    let count: Int
    let printsJSON: Bool

    /// Returns after `count` outcomes (or runs until cancelled).
    func run(from start: Date) async throws {
        var printed: [Key: Date] = [:]
        var newest = start
        var printedCount = 0
        while true {
            let from = max(start, newest.addingTimeInterval(-Self.lookback))
            var pageToken: String?
            repeat {
                var query = "since=\(ServiceClient.escaped(WireCoding.formatTimestamp(from)))"
                if let pageToken { query += "&pageToken=\(ServiceClient.escaped(pageToken))" }
                let page = try await client.call(.GET, path + "?" + query, bearer: apiKey).decode(DeliveryPage.self)
                for record in page.deliveries {
                    let key = Key(pushId: record.pushId, attempt: record.attempt, result: record.result)
                    guard printed[key] == nil else { continue }
                    printed[key] = record.at
                    newest = max(newest, record.at)
                    try print(record)
                    printedCount += 1
                    if printedCount == count { return }
                }
                pageToken = page.deliveries.isEmpty || page.nextPageToken == pageToken ? nil : page.nextPageToken
            } while pageToken != nil
            // What the next round cannot list again need not be remembered.
            let forgetBefore = newest.addingTimeInterval(-Self.lookback)
            printed = printed.filter { $0.value >= forgetBefore }
            try await Task.sleep(for: .seconds(1))
        }
    }

    private func print(_ record: DeliveryRecord) throws {
        guard !printsJSON else {
            return Output.line(String(decoding: try WireCoding.makeEncoder().encode(record), as: UTF8.self))
        }
        Output.line(
            "\(WireCoding.formatTimestamp(record.at)) \(record.notificationId.lowercasedString) \(record.subscriptionId.lowercasedString) "
                + "\(record.platform) \(record.attempt) \(record.result) \(record.status.map(String.init) ?? "-") \(record.reason ?? "-")")
    }
}

/// Reads the live stream and prints its first `count` changes.
private struct StreamFollower: Sendable {
    let client: ServiceClient
    let path: String
    let token: String
    let count: Int
    let printsJSON: Bool

    /// Returns after `count` changes; the stream ending or breaking first is unavailability.
    func run(deadline: NIODeadline) async throws {
        let response = try await client.open(path, bearer: token, headers: [("Accept", "text/event-stream")], deadline: deadline)
        var reader = ServerSentEventParser()
        var printed = 0
        do {
            for try await buffer in response.body {
                for event in reader.feed(buffer.readableBytesView) where event.type == "change" {
                    print(event)
                    printed += 1
                    if printed == count { return }
                }
            }
        } catch {
            throw CommandFailure.unavailable("the stream broke after \(printed) changes: \(error)")
        }
        throw CommandFailure.unavailable("the service ended the stream after \(printed) changes")
    }

    private func print(_ event: ServerSentEventParser.Event) {
        guard !printsJSON, let change = try? WireCoding.makeDecoder().decode(NotificationChange.self, from: Data(event.data.utf8)) else {
            return Output.line(event.data)
        }
        let notification = change.notification
        let title = notification.payload?.visualContent?.title ?? notification.payload?.rawContent ?? "-"
        Output.line(
            "\(event.id ?? "-") \(change.sequence) \(change.kind.rawValue) \(notification.id.uuidString.lowercased()) "
                + "\(notification.readState.rawValue) \(notification.userActionState.rawValue) \(title)")
    }
}
