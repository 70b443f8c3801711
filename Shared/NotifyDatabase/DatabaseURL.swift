import Foundation
import Logging
import PostgresNIO

/// Turns `postgres://user:password@host:port/database` into a `PostgresClient` configuration.
public enum DatabaseURL {
    public struct Invalid: Error, CustomStringConvertible {
        public var description: String { "expected a postgres://user:password@host:port/database URL" }
    }

    public static func clientConfiguration(_ url: String, maximumConnections: Int = 8) throws(Invalid) -> PostgresClient.Configuration {
        guard let components = URLComponents(string: url),
              components.scheme == "postgres" || components.scheme == "postgresql",
              let host = components.host, let user = components.user
        else { throw Invalid() }
        let database = components.path.isEmpty ? nil : String(components.path.dropFirst())
        var configuration = PostgresClient.Configuration(
            host: host, port: components.port ?? 5432, username: user,
            password: components.password?.removingPercentEncoding, database: database, tls: .disable)
        configuration.options.maximumConnections = maximumConnections
        configuration.options.minimumConnections = 1
        return configuration
    }

    /// A client (and connection pool) for the database the URL names.
    public static func makeClient(_ url: String, maximumConnections: Int = 8, logger: Logger) throws(Invalid) -> PostgresClient {
        PostgresClient(configuration: try clientConfiguration(url, maximumConnections: maximumConnections), backgroundLogger: logger)
    }
}
