/// What a service is told at start-up, read from the environment variables it lists (and `--help` shows).
public protocol ServiceConfiguration: Sendable {
    /// The environment variables the service reads.
    static var variables: [EnvironmentVariable] { get }
    /// The configuration from `environment`, read with `variables`; a bad value fails naming its variable.
    init(environment: ServiceEnvironment) throws(ConfigurationError)
    /// How the process logs.
    var logging: LogSettings { get }
}
