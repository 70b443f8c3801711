import FanoutCore
import Logging
import NotifyRuntime
import ServiceLifecycle

/// `fanout --help`, the environment it reads, and fanout built and run.
@main
struct FanoutCommandLine: ServiceCommand {
    static let serviceName = "fanout"
    static let abstract = "Turns change events from fanout.changes into push jobs, one per target device, published in batches per provider."

    static func build(configuration: FanoutConfiguration, logger: Logger, metrics: ServiceMetrics) throws -> some Service {
        try buildFanout(configuration: configuration, logger: logger, metrics: metrics)
    }
}
