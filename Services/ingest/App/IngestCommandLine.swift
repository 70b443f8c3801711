import IngestCore
import Logging
import NotifyRuntime
import ServiceLifecycle

/// `ingest --help`, the environment it reads, and ingest built and run.
@main
struct IngestCommandLine: ServiceCommand {
    static let serviceName = "ingest"
    static let abstract = "The edge: HTTP API for operators, app servers and devices, and the consumer of the notify.ingest AMQP exchange."

    static func build(configuration: IngestConfiguration, logger: Logger, metrics: ServiceMetrics) throws -> some Service {
        try buildIngest(configuration: configuration, logger: logger, metrics: metrics)
    }
}
