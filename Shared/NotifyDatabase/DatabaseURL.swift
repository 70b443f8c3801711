import Foundation
import Logging
import PostgresNIO

/// Turns `postgres://user:password@host:port/database` into a `PostgresClient` or `PostgresConnection` configuration.
public enum DatabaseURL {
    public struct Invalid: Error, CustomStringConvertible {
        public var description: String { "expected a postgres://user:password@host:port/database URL" }
    }

    /// What the URL names.
    private struct Parts {
        var host: String
        var port: Int
        var user: String
        var password: String?
        var database: String?

        init(_ url: String) throws(Invalid) {
            guard let components = URLComponents(string: url),
                  components.scheme == "postgres" || components.scheme == "postgresql",
                  let host = components.host, let user = components.user
            else { throw Invalid() }
            self.host = host
            port = components.port ?? 5432
            self.user = user
            password = components.password?.removingPercentEncoding
            database = components.path.isEmpty ? nil : String(components.path.dropFirst())
        }
    }

    public static func clientConfiguration(_ url: String, maximumConnections: Int = 8) throws(Invalid) -> PostgresClient.Configuration {
        let parts = try Parts(url)
        var configuration = PostgresClient.Configuration(
            host: parts.host, port: parts.port, username: parts.user, password: parts.password, database: parts.database, tls: .disable)
        configuration.options.maximumConnections = maximumConnections
        configuration.options.minimumConnections = 1
        return configuration
    }

    /// A single connection's configuration, for what must stay on one session (session-level advisory locks).
    public static func connectionConfiguration(_ url: String) throws(Invalid) -> PostgresConnection.Configuration {
        let parts = try Parts(url)
        return PostgresConnection.Configuration(
            host: parts.host, port: parts.port, username: parts.user, password: parts.password, database: parts.database, tls: .disable)
    }

    /// A client (and connection pool) for the database the URL names.
    public static func makeClient(_ url: String, maximumConnections: Int = 8, logger: Logger) throws(Invalid) -> PostgresClient {
        PostgresClient(configuration: try clientConfiguration(url, maximumConnections: maximumConnections), backgroundLogger: logger)
    }
}
