import NotifyRuntime
import StorageCore

/// `storage --help` and the environment it reads.
@main
struct StorageCommandLine: ServiceCommand {
    static let variables = StorageService.variables

    static let configuration = serviceConfiguration(
        name: "storage",
        abstract: "The only PostgreSQL writer: applies commands from storage.commands in batched transactions and emits change events to fanout.changes.")

    static func runService(environment: ServiceEnvironment) async throws {
        try await StorageService(environment: environment).run()
    }
}
