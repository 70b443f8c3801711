import ArgumentParser

/// The command line of a service: `--help` lists its environment variables, and `run()` reads and
/// checks them (naming every missing one) before handing them to the service.
public protocol ServiceCommand: AsyncParsableCommand {
    /// The environment variables the service reads, shown by `--help`.
    static var variables: [EnvironmentVariable] { get }
    /// Builds and runs the service until SIGTERM or SIGINT.
    static func runService(environment: ServiceEnvironment) async throws
}

extension ServiceCommand {
    public func run() async throws {
        let environment: ServiceEnvironment
        do {
            environment = try ServiceEnvironment(Self.variables)
        } catch {
            throw ValidationError(error.description)
        }
        try await Self.runService(environment: environment)
    }

    /// The command configuration of a service named `name`, its help listing `variables`.
    public static func serviceConfiguration(name: String, abstract: String) -> CommandConfiguration {
        CommandConfiguration(commandName: name, abstract: abstract, discussion: ServiceEnvironment.helpText(variables))
    }
}
