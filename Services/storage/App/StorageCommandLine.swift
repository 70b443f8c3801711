import Logging
import NotifyRuntime
import ServiceLifecycle
import StorageCore

/// `storage --help`, the environment it reads, and storage built and run.
@main
struct StorageCommandLine: ServiceCommand {
    static let serviceName = "storage"
    static let abstract =
        "The only PostgreSQL writer: applies commands from storage.commands in batched transactions and emits change events to fanout.changes."

    static func build(configuration: StorageConfiguration, logger: Logger, metrics: ServiceMetrics) throws -> some Service {
        try buildStorage(configuration: configuration, logger: logger, metrics: metrics)
    }
}
