import ArgumentParser
import Foundation
import NotifyModels

/// `notifyctl send`: publishes as the app server (API key).
struct SendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Publish a notification as the app server; prints its id (or each item's result of a batch).",
        discussion: """
            The target is --user (every device of the user), --device (exactly that subscription; in the user's \
            feed on every device), --source (every member of the event source: a broadcast) or --user with \
            --source (the user's devices in the source). --file sends a publish body as it is instead: one \
            notification, {"notifications": [...]} or one with "recipients"; a batch prints a line per item \
            (index, status, id or error) and exits 1 if any item was refused.
            """
    )

    @OptionGroup var options: ServiceOptions

    @Option(help: "The user to reach: every device of theirs (with --source: those in the source).")
    var user: String?

    @Option(help: ArgumentHelp("Exactly this device.", valueName: "subscription-id"))
    var device: String?

    @Option(help: "An event source: every member (a broadcast), or with --user the user's devices in it.")
    var source: String?

    @Option(help: "The alert's title.")
    var title: String?

    @Option(help: "The alert's body.")
    var body: String?

    @Option(help: "App-defined raw content (at most 3072 bytes).")
    var raw: String?

    @Option(help: "The app's own id for it: publishing again with the same one replaces it.")
    var appNotificationId: String?

    @Option(help: ArgumentHelp("A JSON publish body to send as it is, instead of the options above.", valueName: "notification.json"))
    var file: String?

    func validate() throws {
        let built = [user, device, source, title, body, raw, appNotificationId].contains { $0 != nil }
        if file != nil {
            guard !built else { throw UsageError("--file is sent as it is: give no target or content option with it") }
            return
        }
        guard user != nil || device != nil || source != nil else { throw UsageError("give a target: --user, --device or --source (or --file)") }
        guard device == nil || (user == nil && source == nil) else { throw UsageError("--device names one device: not with --user or --source") }
        guard title != nil || body != nil || raw != nil else { throw UsageError("give --title, --body or --raw (or --file)") }
    }

    func run() async throws {
        let client = options.client
        let answer = try await client.send(
            .POST, "/v1/apps/\(ServiceClient.escaped(try options.appId()))/notifications", bearer: try options.appKey(), body: try publishBody())
        // A batch or recipient list is answered an item each: 202 when any was accepted, else 400 with the same body.
        if answer.status == 202 || answer.status == 400, let results = try? WireCoding.makeDecoder().decode(PublishAnswer.self, from: answer.body).results {
            try report(results, answer: answer)
            return
        }
        guard answer.isSuccess else { throw client.failure(answer) }
        try options.present(answer, as: PublishAnswer.self) { published in Output.line(published.id ?? "") }
    }

    private func publishBody() throws -> Data {
        if let file { return try InputFile.data(file, option: "--file") }
        let visual = title == nil && body == nil ? nil : VisualContent(title: title, body: body)
        return try ServiceClient.encode(NotificationRequest(
            userId: user, subscriptionId: device, eventSource: source, appNotificationId: appNotificationId,
            payload: NotificationPayload(rawContent: raw, visualContent: visual)))
    }

    /// Prints each item's result; any refused item makes the command fail.
    private func report(_ results: [PublishAnswer.ItemResult], answer: ServiceAnswer) throws {
        if options.json {
            Output.answer(answer.body)
        } else {
            var table = TextTable("INDEX", "STATUS", "ID OR ERROR")
            for result in results {
                table.add(String(result.index), String(result.status), result.id ?? result.error.map(CommandFailure.describe) ?? "")
            }
            table.print()
        }
        let refused = results.count { $0.status != 202 }
        if refused > 0 { throw CommandFailure.refused("\(refused) of \(results.count) items refused") }
    }
}
