import Foundation
import Logging
import PostgresNIO

/// Turns `postgres://user:password@host:port/database` into a `PostgresClient` or `PostgresConnection` configuration.
public enum DatabaseURL {
    /// A URL that names no PostgreSQL database; the description says what is wrong without repeating the URL, which
    /// may hold a password.
    public struct Invalid: Error, CustomStringConvertible {
        /// What is wrong, e.g. "it names no host".
        public let reason: String
        public var description: String { "expected a postgres://user:password@host:port/database URL (\(reason))" }
    }

    /// What the URL names.
    private struct Parts {
        var host: String
        var port: Int
        var user: String
        var password: String?
        var database: String?

        init(_ url: String) throws(Invalid) {
            guard let components = URLComponents(string: url) else { throw Invalid(reason: "it is not a URL") }
            guard components.scheme == "postgres" || components.scheme == "postgresql" else {
                throw Invalid(reason: "its scheme is not postgres or postgresql")
            }
            guard let host = components.host, !host.isEmpty else { throw Invalid(reason: "it names no host") }
            guard let user = components.user, !user.isEmpty else { throw Invalid(reason: "it names no user") }
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
