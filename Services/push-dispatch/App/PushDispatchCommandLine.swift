import NotifyRuntime
import PushDispatchCore

/// `push-dispatch --help` and the environment it reads.
@main
struct PushDispatchCommandLine: ServiceCommand {
    static let variables = PushDispatchService.variables

    static let configuration = serviceConfiguration(
        name: "push-dispatch",
        abstract: "Sends push jobs to APNs, FCM, WNS and Web Push, retries through retry queues, dead-letters what cannot succeed, and reports every outcome on push.feedback.")

    static func runService(environment: ServiceEnvironment) async throws {
        try await PushDispatchService(environment: environment).run()
    }
}
