import ArgumentParser
import Logging
import ServiceLifecycle

/// The command line of a service, the same for each: `--help` lists the environment variables its configuration
/// reads; `run()` reads them (naming every missing one), bootstraps the process's logging and metrics, builds the
/// service and runs it until SIGTERM or SIGINT, which shut it down gracefully.
public protocol ServiceCommand: AsyncParsableCommand {
    /// What the service is told at start-up.
    associatedtype Configuration: ServiceConfiguration
    /// The service as built, ready to run.
    associatedtype Built: Service
    /// The command's name, also its logger's label.
    static var serviceName: String { get }
    /// What the service does, in a sentence of `--help`.
    static var abstract: String { get }
    /// Builds the service from its configuration (its library's build function); nothing connects until it runs.
    static func build(configuration: Configuration, logger: Logger, metrics: ServiceMetrics) throws -> Built
}

extension ServiceCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(commandName: serviceName, abstract: abstract, discussion: ServiceEnvironment.helpText(Configuration.variables))
    }

    public func run() async throws {
        let environment: ServiceEnvironment
        do {
            environment = try ServiceEnvironment(Configuration.variables)
        } catch {
            throw ValidationError(error.description)
        }
        let configuration = try Configuration(environment: environment)
        let logger = configuration.logging.bootstrap(label: Self.serviceName)
        let service = try Self.build(configuration: configuration, logger: logger, metrics: ServiceMetrics.bootstrap())
        try await ServiceGroup(configuration: ServiceGroupConfiguration(
            services: [service], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger
        )).run()
    }
}
