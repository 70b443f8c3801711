import IngestCore
import NotifyRuntime

/// `ingest --help` and the environment it reads.
@main
struct IngestCommandLine: ServiceCommand {
    static let variables = IngestConfiguration.variables
    static let configuration = serviceConfiguration(
        name: "ingest",
        abstract: "The edge: HTTP API for operators, app servers and devices, and the consumer of the notify.ingest AMQP exchange.")

    static func runService(environment: ServiceEnvironment) async throws {
        try await buildApplication(configuration: IngestConfiguration(environment: environment)).runService()
    }
}
