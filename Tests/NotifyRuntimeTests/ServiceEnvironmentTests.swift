import Logging
import NotifyRuntime
import Testing

/// What every service reads the same way at start-up: LOG_LEVEL; a value that is wrong stops the service with an error
/// naming its variable.
@Suite("a service's environment")
struct ServiceEnvironmentTests {
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
}
