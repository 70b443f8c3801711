import ArgumentParser
import NotifyModels

/// `notifyctl event-sources`: the app's event sources (API key).
struct EventSourcesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "event-sources",
        abstract: "Define, list, show and delete the app's event sources (the app's API key).",
        subcommands: [CreateEventSourceCommand.self, ListEventSourcesCommand.self, ShowEventSourceCommand.self, DeleteEventSourceCommand.self]
    )

    /// `/v1/apps/{appId}/event-sources`, or one source's path under it.
    static func path(_ options: ServiceOptions, name: String? = nil) throws -> String {
        let sources = "/v1/apps/\(ServiceClient.escaped(try options.appId()))/event-sources"
        return name.map { "\(sources)/\(ServiceClient.escaped($0))" } ?? sources
    }

    static func print(_ source: EventSourceView) {
        var fields = FieldList()
        fields.add("name", source.name)
        fields.add("policy", source.policy.rawValue)
        fields.add("description", source.description)
        fields.add("memberDevices", String(source.memberDevices))
        fields.add("memberUsers", String(source.memberUsers))
        fields.add("createdAt", WireCoding.formatTimestamp(source.createdAt))
        fields.print()
    }
}

/// `event-sources create`: defines a source, or changes it.
struct CreateEventSourceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create", abstract: "Define an event source (again with the same name changes its policy and description).")

    @OptionGroup var options: ServiceOptions

    @Argument(help: "The source's name: 1 to 100 of A-Z a-z 0-9 . _ : -")
    var name: String

    @Option(help: "Who puts devices in it: open (any user, their own devices; the default) or appServer (only the app server).")
    var policy: EventSourcePolicy?

    @Option(help: "What the source is about (at most 1000 bytes).")
    var description: String?

    func run() async throws {
        let answer = try await options.client.call(
            .POST, try EventSourcesCommand.path(options), bearer: try options.appKey(),
            json: EventSourceRequest(name: name, policy: policy, description: description))
        try options.present(answer, as: EventSourceView.self) { source in
            Output.line(answer.status == 201 ? "created \(source.name)" : "changed \(source.name)")
            EventSourcesCommand.print(source)
        }
    }
}

/// `event-sources list`: every source of the app with its audience.
struct ListEventSourcesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the app's event sources with their member counts.")

    @OptionGroup var options: ServiceOptions

    func run() async throws {
        let answer = try await options.client.call(.GET, try EventSourcesCommand.path(options), bearer: try options.appKey())
        try options.present(answer, as: EventSourceList.self) { list in
            guard !list.eventSources.isEmpty else { return Output.line("no event sources") }
            var table = TextTable("NAME", "POLICY", "DEVICES", "USERS", "CREATED", "DESCRIPTION")
            for source in list.eventSources {
                table.add(
                    source.name, source.policy.rawValue, String(source.memberDevices), String(source.memberUsers),
                    WireCoding.formatTimestamp(source.createdAt), source.description ?? "")
            }
            table.print()
        }
    }
}

/// `event-sources show`: one source.
struct ShowEventSourceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "Show one event source with its member counts.")

    @OptionGroup var options: ServiceOptions

    @Argument(help: "The source's name.")
    var name: String

    func run() async throws {
        let answer = try await options.client.call(.GET, try EventSourcesCommand.path(options, name: name), bearer: try options.appKey())
        try options.present(answer, as: EventSourceView.self, human: EventSourcesCommand.print)
    }
}

/// `event-sources delete`: a source and its memberships.
struct DeleteEventSourceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete an event source and its memberships.")

    @OptionGroup var options: ServiceOptions

    @Argument(help: "The source's name.")
    var name: String

    func run() async throws {
        let answer = try await options.client.call(.DELETE, try EventSourcesCommand.path(options, name: name), bearer: try options.appKey())
        guard !options.json else { return }
        Output.line(answer.status == 202 ? "accepted the deletion of \(name)" : "deleted \(name)")
    }
}
