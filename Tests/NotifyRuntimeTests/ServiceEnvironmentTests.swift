import Logging
import NotifyRuntime
import Testing

/// What every service reads the same way at start-up: LOG_LEVEL, and a PostgreSQL URL; a value that is wrong stops the
/// service with an error naming its variable.
@Suite("a service's environment")
struct ServiceEnvironmentTests {
    private static let databaseURL = EnvironmentVariable.databaseURL(role: "tests")
    private static let standbyURL = EnvironmentVariable("NOTIFY_STANDBY_URL", "a URL that may be unset")

    @Test("each level swift-log names is LOG_LEVEL's, as written; unset, info", arguments: Logger.Level.allCases)
    func logLevels(_ level: Logger.Level) throws {
        let environment = try ServiceEnvironment([.logLevel], environment: ["LOG_LEVEL": level.rawValue])
        #expect(LogSettings(environment: environment).level == level)
        #expect(LogSettings(environment: try ServiceEnvironment([.logLevel], environment: [:])).level == .info)
    }

    @Test("any other LOG_LEVEL is refused, naming the variable and the levels", arguments: ["verbose", "DEBUG", "warn"])
    func unknownLogLevel(_ value: String) {
        let error = #expect(throws: ConfigurationError.self) { try ServiceEnvironment([.logLevel], environment: ["LOG_LEVEL": value]) }
        #expect(error?.description == "LOG_LEVEL must be trace, debug, info, notice, warning, error or critical, got '\(value)'")
    }

    @Test("a PostgreSQL URL is answered as given, an unset optional one as nil")
    func databaseURLs() throws {
        let url = "postgres://notify:db-secret@db.internal:5433/notify"
        let environment = try ServiceEnvironment([Self.databaseURL, Self.standbyURL], environment: ["NOTIFY_DATABASE_URL": url])
        #expect(try environment.requireDatabaseURL(Self.databaseURL) == url)
        #expect(try environment.databaseURL(Self.standbyURL) == nil)
    }

    @Test("a URL that names no PostgreSQL database is refused naming the variable and what is wrong, never the password", arguments: [
        ("mysql://notify:db-secret@db/notify", "its scheme is not postgres or postgresql"),
        ("postgres://notify:db-secret@/notify", "it names no host"),
        ("postgresql://db.internal/notify", "it names no user"),
        ("postgres://notify:db-secret@db:port/notify", "it is not a URL"),
    ])
    func malformedDatabaseURL(_ url: String, reason: String) throws {
        let environment = try ServiceEnvironment([Self.databaseURL, Self.standbyURL], environment: ["NOTIFY_DATABASE_URL": url, "NOTIFY_STANDBY_URL": url])
        let required = #expect(throws: ConfigurationError.self) { try environment.requireDatabaseURL(Self.databaseURL) }
        #expect(required?.description == "NOTIFY_DATABASE_URL: expected a postgres://user:password@host:port/database URL (\(reason))")
        let optional = #expect(throws: ConfigurationError.self) { try environment.databaseURL(Self.standbyURL) }
        #expect(optional?.description.hasPrefix("NOTIFY_STANDBY_URL: ") == true)
        #expect(optional?.description.contains("db-secret") == false)
    }
}
