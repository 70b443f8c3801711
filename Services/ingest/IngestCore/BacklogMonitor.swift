import Foundation
import Logging
import NotifyBrokerAdmin
import NotifyRuntime
import ServiceLifecycle

/// Reads the depth of the pipeline's queues from RabbitMQ's management API about once a second and hands them to
/// `PipelineBacklog`. When the API does not answer for ten seconds the backlog is cleared (publishes are taken: a
/// refusal must rest on a depth seen, not on an outage of the management API).
struct BacklogMonitor: Service {
    let administration: RabbitMQManagementClient
    let virtualHost: String
    let backlog: PipelineBacklog
    let logger: Logger
    var interval: Duration = .seconds(1)

    private struct QueueDepth: Decodable {
        var name: String
        var messages: Int?
    }

    func run() async throws {
        var lastRead = ContinuousClock.now
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                let answer = try await administration.request(
                    .GET, "/api/queues/\(RabbitMQManagementClient.segment(virtualHost))?columns=name,messages", doing: "read queue depths",
                    answerLimit: 4 << 20)
                let queues = try JSONDecoder().decode([QueueDepth].self, from: answer)
                backlog.record(depths: Dictionary(queues.map { ($0.name, $0.messages ?? 0) }) { max($0, $1) })
                lastRead = .now
            } catch {
                if ContinuousClock.now - lastRead > .seconds(10) {
                    backlog.clear()
                    logger.warning("queue depths cannot be read; publishes are taken without the backlog check", metadata: ["error": "\(error)"])
                    lastRead = .now
                }
            }
            await pauseUnlessShuttingDown(for: interval)
        }
    }
}
