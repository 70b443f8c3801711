import ArgumentParser
import NotifyModels

/// `apps list`: every app, a page at a time, with its providers.
struct ListAppsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List the apps: id, name, badge mode, providers (a refused one marked !), broker users.",
        discussion: "With --json, each page's answer (GET /v1/apps) is printed as it came.")

    @OptionGroup var options: ServiceOptions

    @Option(help: "Apps to show, at most (1 to 10000; pages of 1000 are read).")
    var limit = 1000

    func validate() throws {
        guard (1...10_000).contains(limit) else { throw ValidationError("--limit must be 1 to 10000") }
    }

    func run() async throws {
        var apps: [AppView] = []
        var pageToken: String?
        repeat {
            let query = "limit=\(min(limit - apps.count, 1000))" + (pageToken.map { "&pageToken=\(ServiceClient.escaped($0))" } ?? "")
            let answer = try await options.client.call(.GET, "/v1/apps?\(query)", bearer: options.operatorToken)
            let page = try answer.decode(AppPage.self)
            // --json: each page's answer as it came, one after the other.
            if options.json { Output.answer(answer.body) }
            apps += page.apps
            pageToken = page.nextPageToken
        } while pageToken != nil && apps.count < limit
        guard !options.json else { return }
        var table = TextTable("APP", "NAME", "BADGE", "PROVIDERS", "BROKER USERS", "CREATED")
        for app in apps {
            table.add(
                app.appId, app.name, app.badgeMode, app.providers.map { $0.provider + ($0.rejectedReason == nil ? "" : "!") }.joined(separator: ","),
                String(app.brokerUsers.count), WireCoding.formatTimestamp(app.createdAt))
        }
        table.print()
    }
}

/// `apps show`: one app's settings, providers and broker users.
struct ShowAppCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "Show one app: its settings, each provider (and why it was refused), broker users, key rotations.")

    @OptionGroup var options: ServiceOptions

    @Argument(help: "The app's id.")
    var appId: String

    func run() async throws {
        let answer = try await options.client.call(.GET, "/v1/apps/\(ServiceClient.escaped(appId))", bearer: options.operatorToken)
        try options.present(answer, as: AppView.self) { app in
            var fields = FieldList()
            fields.add("appId", app.appId)
            fields.add("name", app.name)
            fields.add("created", WireCoding.formatTimestamp(app.createdAt))
            fields.add("badgeMode", app.badgeMode)
            fields.add("requests/s", app.rateLimit.requestsPerSecond.map(String.init) ?? "the service's default")
            fields.add("notifications/s", app.rateLimit.notificationsPerSecond.map(String.init) ?? "the service's default")
            for provider in app.providers {
                let refused = provider.rejectedReason.map { ", REFUSED: \($0)" } ?? ""
                let identity = provider.appPackage.map { " (\($0))" } ?? ""
                fields.add("provider \(provider.provider)\(identity)", "set \(WireCoding.formatTimestamp(provider.updatedAt))\(refused)")
            }
            for user in app.brokerUsers {
                fields.add("broker user", user.user + (user.retiresAt.map { " (retires \(WireCoding.formatTimestamp($0)))" } ?? ""))
            }
            if let at = app.previousApiKeyRetiresAt { fields.add("previous apiKey accepted until", WireCoding.formatTimestamp(at)) }
            if let at = app.previousClientSigningKeyRetiresAt {
                fields.add("previous clientSigningKey accepted until", WireCoding.formatTimestamp(at))
            }
            fields.add(identityProvider: app.identityProvider)
            fields.print()
        }
    }
}
