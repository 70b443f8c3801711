import Logging
import NotifyRuntime
import PushDispatchCore
import ServiceLifecycle

/// `push-dispatch --help`, the environment it reads, and push-dispatch built and run.
@main
struct PushDispatchCommandLine: ServiceCommand {
    static let serviceName = "push-dispatch"
    static let abstract =
        "Sends push jobs to APNs, FCM, WNS and Web Push, retries through retry queues, dead-letters what cannot succeed, and reports every outcome on push.feedback."

    static func build(configuration: PushDispatchConfiguration, logger: Logger, metrics: ServiceMetrics) throws -> some Service {
        try buildPushDispatch(configuration: configuration, logger: logger, metrics: metrics)
    }
}
