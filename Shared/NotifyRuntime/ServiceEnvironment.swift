import Foundation
import Logging

/// One environment variable a service reads: the same list drives `--help` and validation.
public struct EnvironmentVariable: Sendable {
    public var name: String
    public var summary: String
    /// Used when the variable is unset; nil together with `required == false` means "off".
    public var defaultValue: String?
    public var required: Bool
    /// The values accepted, if only some are; any other fails at start-up.
    public var choices: [String]?

    public init(_ name: String, _ summary: String, default defaultValue: String? = nil, required: Bool = false, choices: [String]? = nil) {
        self.name = name
        self.summary = summary
        self.defaultValue = defaultValue
        self.required = required
        self.choices = choices
    }

    public static let amqpURL = EnvironmentVariable(
        "NOTIFY_AMQP_URL",
        "RabbitMQ URL, amqp://user:password@host:port/vhost; a cluster: one URL per node, separated by commas (a lost connection goes to the next node)", default: "amqp://guest:guest@127.0.0.1:5672/%2f")
    public static let logLevel = EnvironmentVariable(
        "LOG_LEVEL", "the least severe entries logged: trace, debug, info, notice, warning, error or critical", default: "info",
        choices: Logger.Level.allCases.map(\.rawValue))
    public static let logFormat = EnvironmentVariable(
        "LOG_FORMAT",
        "text (a line per entry) or json (a JSON object per line: time, level, service, message, then each metadata item as a field)",
        default: "text", choices: ["text", "json"])
    public static let httpHost = EnvironmentVariable("NOTIFY_HTTP_HOST", "address the HTTP server (API or /health) binds to", default: "127.0.0.1")

    public static func databaseURL(role: String) -> EnvironmentVariable {
        EnvironmentVariable("NOTIFY_DATABASE_URL", "PostgreSQL URL (\(role)), postgres://user:password@host:port/database", required: true)
    }

    public static func healthPort(default port: Int) -> EnvironmentVariable {
        EnvironmentVariable("NOTIFY_HEALTH_PORT", "port of the /health endpoint", default: String(port))
    }
}

/// A configuration problem found at start-up; the service exits with this message.
public struct ConfigurationError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// The values of a service's environment variables, checked once at start-up.
public struct ServiceEnvironment: Sendable {
    private let values: [String: String]

    /// Reads `variables`, failing with every missing required variable named at once.
    public init(_ variables: [EnvironmentVariable], environment: [String: String] = ProcessInfo.processInfo.environment) throws(ConfigurationError) {
        var values: [String: String] = [:]
        var missing: [String] = []
        for variable in variables {
            if let value = environment[variable.name], !value.isEmpty {
                if let choices = variable.choices, !choices.contains(value) {
                    throw ConfigurationError("\(variable.name) must be \(Self.alternatives(choices)), got '\(value)'")
                }
                values[variable.name] = value
            } else if let fallback = variable.defaultValue {
                values[variable.name] = fallback
            } else if variable.required {
                missing.append("  \(variable.name): \(variable.summary)")
            }
        }
        if !missing.isEmpty {
            throw ConfigurationError("missing required environment variables:\n" + missing.joined(separator: "\n"))
        }
        self.values = values
    }

    /// "a or b", "a, b or c".
    private static func alternatives(_ choices: [String]) -> String {
        guard let last = choices.last, choices.count > 1 else { return choices.joined() }
        return choices.dropLast().joined(separator: ", ") + " or " + last
    }

    public func string(_ variable: EnvironmentVariable) -> String? {
        values[variable.name]
    }

    public func require(_ variable: EnvironmentVariable) throws(ConfigurationError) -> String {
        guard let value = values[variable.name] else { throw ConfigurationError("\(variable.name) is not set: \(variable.summary)") }
        return value
    }

    public func integer(_ variable: EnvironmentVariable) throws(ConfigurationError) -> Int {
        let text = try require(variable)
        guard let value = Int(text) else { throw ConfigurationError("\(variable.name) must be an integer, got '\(text)'") }
        return value
    }

    /// The `--help` section listing the variables.
    public static func helpText(_ variables: [EnvironmentVariable]) -> String {
        var lines = ["Environment variables:"]
        for variable in variables {
            var line = "  \(variable.name)\n      \(variable.summary)"
            if variable.required {
                line += " (required)"
            } else if let fallback = variable.defaultValue {
                line += " (default: \(fallback))"
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }
}
