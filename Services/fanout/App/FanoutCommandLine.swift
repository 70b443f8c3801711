import NotifyRuntime
import FanoutCore

/// `fanout --help` and the environment it reads.
@main
struct FanoutCommandLine: ServiceCommand {
    static let variables = FanoutService.variables

    static let configuration = serviceConfiguration(
        name: "fanout",
        abstract: "Turns change events from fanout.changes into push jobs, one per target device, published in batches per provider.")

    static func runService(environment: ServiceEnvironment) async throws {
        try await FanoutService(environment: environment).run()
    }
}
