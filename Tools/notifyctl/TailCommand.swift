import ArgumentParser
import Foundation
import NIOCore
import NotifyModels

/// `notifyctl tail`: a user's changes as they happen, over the live stream, for a bounded count and time.
struct TailCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tail",
        abstract: "Follow a user's changes over the live stream, one line each, until --count changes or --timeout seconds.",
        discussion: """
            Reads GET /v1/me/stream (Server-Sent Events) with a user token it mints (--app, --signing-key). A line \
            reads: cursor sequence kind notificationId readState userActionState title. The stream starts after \
            --cursor (e.g. the last cursor printed), else with every change the service keeps for the user. With \
            --json each change is printed as the stream sent it (a NotificationChange), one a line.
            """
    )

    @OptionGroup var options: ServiceOptions

    @Option(help: "The user's id.")
    var user: String

    @Option(help: "The app's clientSigningKey, to mint the user's token.")
    var signingKey: String

    @Option(help: "Stop after this many changes.")
    var count = 100

    @Option(help: "Stop after this many seconds.")
    var timeout = 60

    @Option(help: "Start after this cursor.")
    var cursor: String?

    func validate() throws {
        guard count > 0 else { throw UsageError("--count must be positive") }
        guard timeout > 0 else { throw UsageError("--timeout must be a positive number of seconds") }
    }

    func run() async throws {
        let follower = StreamFollower(
            client: options.client,
            path: "/v1/me/stream" + (cursor.map { "?cursor=\(ServiceClient.escaped($0))" } ?? ""),
            token: try await UserToken.mint(userId: user, appId: try options.appId(), signingKey: signingKey, lifetime: TimeInterval(timeout + 60)),
            count: count, printsJSON: options.json)
        let timeout = self.timeout
        // Whichever comes first ends the command: the last change counted, or the timeout.
        try await withThrowingTaskGroup(of: Void.self) { group in
            // The request's own deadline comes after the timeout, so that it is the timeout that ends a quiet stream.
            group.addTask { try await follower.run(deadline: .now() + .seconds(Int64(timeout) + 30)) }
            group.addTask { try await Task.sleep(for: .seconds(timeout)) }
            _ = try await group.next()
            group.cancelAll()
        }
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
