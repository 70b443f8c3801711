import Foundation
import Logging
import ServiceLifecycle

/// Starts logging and runs a service's parts in one `ServiceGroup`.
public enum ServiceRunner {
    /// Bootstraps swift-log once, at the level LOG_LEVEL names, writing to standard error in the format LOG_FORMAT
    /// names: `text` by default, or `json` (`JSONLogHandler`).
    public static func bootstrapLogging(label: String, level: String?, format: String?) -> Logger {
        let logLevel = level.flatMap(Logger.Level.init(rawValue:)) ?? .info
        let json = format == "json"
        LoggingSystem.bootstrap { label in
            var handler: any LogHandler = json ? JSONLogHandler(label: label) : StreamLogHandler.standardError(label: label)
            handler.logLevel = logLevel
            return handler
        }
        return Logger(label: label)
    }

    /// Runs `services` until SIGTERM or SIGINT, then shuts them down gracefully in reverse order
    /// (so list the things others depend on, such as publishers, first).
    public static func run(_ services: [any Service], logger: Logger) async throws {
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: services.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) },
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        ))
        try await group.run()
    }
}
