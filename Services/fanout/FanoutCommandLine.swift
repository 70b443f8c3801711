import ArgumentParser
import NotifyRuntime

/// `fanout --help` and the environment it reads.
@main
struct FanoutCommandLine: AsyncParsableCommand {
    static let prefetch = EnvironmentVariable("NOTIFY_PREFETCH", "change-event messages taken from the broker at once", default: "50")

    static let variables: [EnvironmentVariable] = [
        .amqpURL, .databaseURL(role: "read-only"), prefetch, .httpHost, .healthPort(default: 8082), .logLevel,
    ]

    static let configuration = CommandConfiguration(
        commandName: "fanout",
        abstract: "Turns change events from fanout.changes into push jobs, one per target device, published in batches per provider.",
        discussion: ServiceEnvironment.helpText(variables)
    )

    func run() async throws {
        let environment: ServiceEnvironment
        do {
            environment = try ServiceEnvironment(Self.variables)
        } catch {
            throw ValidationError(error.description)
        }
        try await FanoutService(environment: environment).run()
    }
}
