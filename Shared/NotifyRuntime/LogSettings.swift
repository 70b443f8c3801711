import Logging

/// How a service logs (LOG_LEVEL, LOG_FORMAT): entries at `level` and above, to standard error, in `format`.
public struct LogSettings: Sendable {
    /// A line per entry, or a JSON object per line (`JSONLogHandler`).
    public enum Format: String, Sendable {
        case text
        case json
    }

    public var level: Logger.Level
    public var format: Format

    public init(level: Logger.Level = .info, format: Format = .text) {
        self.level = level
        self.format = format
    }

    /// LOG_LEVEL and LOG_FORMAT, as `ServiceEnvironment` checked them (a value not among their choices fails at start-up).
    public init(environment: ServiceEnvironment) {
        self.init(
            level: environment.string(.logLevel).flatMap(Logger.Level.init(rawValue:)) ?? .info,
            format: environment.string(.logFormat).flatMap(Format.init(rawValue:)) ?? .text)
    }

    /// Bootstraps swift-log with these settings, once per process (`ServiceCommand` does, before it builds the
    /// service), and answers a logger labelled `label`.
    public func bootstrap(label: String) -> Logger {
        let (level, format) = (level, format)
        LoggingSystem.bootstrap { label in
            var handler: any LogHandler = format == .json ? JSONLogHandler(label: label) : StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        return Logger(label: label)
    }
}
