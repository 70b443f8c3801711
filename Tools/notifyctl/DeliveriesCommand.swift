import ArgumentParser
import NotifyModels

/// `notifyctl deliveries`: a notification's delivery log, or its summary (API key).
struct DeliveriesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deliveries",
        abstract: "Print a notification's delivery log (every page), or with --summary its pushes counted by latest result.",
        discussion: "With --json, each page of the log is printed as it came, one a line."
    )

    @OptionGroup var options: ServiceOptions

    @Argument(help: "The notification's id.")
    var notificationId: String

    @Flag(help: "Count each push once by its latest result, per provider and in all, instead of listing the log.")
    var summary = false

    @Option(help: "Outcomes per page of the log, 1 to 10000 (default: the service's, 1000).")
    var limit: Int?

    func validate() throws {
        if let limit, !(1...10_000).contains(limit) { throw UsageError("--limit is 1 to 10000") }
        if limit != nil && summary { throw UsageError("--limit pages the log: not with --summary") }
    }

    func run() async throws {
        let path = "/v1/apps/\(ServiceClient.escaped(try options.appId()))/notifications/\(ServiceClient.escaped(notificationId))/deliveries"
        if summary {
            let answer = try await options.client.call(.GET, path + "/summary", bearer: try options.appKey())
            try options.present(answer, as: DeliverySummary.self, human: Self.print)
        } else {
            try await printLog(path)
        }
    }

    /// Follows `nextPageToken` to the end of the log (a page that brings nothing, or no new token, ends it too).
    private func printLog(_ path: String) async throws {
        let client = options.client
        let apiKey = try options.appKey()
        var records: [DeliveryRecord] = []
        var pageToken: String?
        repeat {
            var query: [String] = []
            if let limit { query.append("limit=\(limit)") }
            if let pageToken { query.append("pageToken=\(ServiceClient.escaped(pageToken))") }
            let answer = try await client.call(.GET, query.isEmpty ? path : path + "?" + query.joined(separator: "&"), bearer: apiKey)
            let page = try answer.decode(DeliveryPage.self)
            if options.json { Output.answer(answer.body) }
            records += page.deliveries
            pageToken = page.deliveries.isEmpty || page.nextPageToken == pageToken ? nil : page.nextPageToken
        } while pageToken != nil
        guard !options.json else { return }
        guard !records.isEmpty else { return Output.line("no deliveries logged") }
        var table = TextTable("AT", "SUBSCRIPTION", "PLATFORM", "SEQ", "ATTEMPT", "RESULT", "STATUS", "REASON")
        for record in records {
            table.add(
                WireCoding.formatTimestamp(record.at), record.subscriptionId.lowercasedString, record.platform, String(record.sequence), String(record.attempt),
                record.result, record.status.map(String.init) ?? "", record.reason ?? "")
        }
        table.print()
    }

    /// The pushes, then a row per provider and one for all, a column per result.
    private static func print(_ summary: DeliverySummary) {
        var fields = FieldList()
        fields.add("notification", summary.notificationId.lowercasedString)
        fields.add("pushes", String(summary.pushes))
        fields.print()
        guard summary.pushes > 0 else { return }
        let known = ["accepted", "retrying", "tokenInvalid", "credentialsRejected", "failed"]
        let results = known.filter { summary.byResult[$0] != nil } + summary.byResult.keys.filter { !known.contains($0) }.sorted()
        var table = TextTable(["PROVIDER"] + results)
        for (provider, counts) in summary.byProvider.sorted(by: { $0.key < $1.key }) {
            table.add([provider] + results.map { String(counts[$0] ?? 0) })
        }
        table.add(["all"] + results.map { String(summary.byResult[$0] ?? 0) })
        table.print()
    }
}
