import Logging
import NotifyAMQP
import NotifyRuntime
import ServiceLifecycle

/// Reads the depth of the pipeline's queues (the messages ready in each, with passive declares over AMQP) and hands them
/// to `PipelineBacklog`: about once a second while publishes come, and every `idleInterval` while none do (the first
/// publish after a quiet spell has them read at once). Each read costs the broker about as much as a listing of its
/// management API, 2-4 ms of CPU a second when made every second (docs/benchmarks-history.md, "2026-11-25, 2acc630 and 0d1421f"), which an idle
/// stack no longer pays. When the depths cannot be read for ten seconds the backlog is cleared (publishes are taken: a
/// refusal must rest on a depth seen, not on an outage of the broker connection that reads them).
struct BacklogMonitor: Service {
    let depths: AMQPQueueDepths
    let backlog: PipelineBacklog
    let logger: Logger
    var interval: Duration = .seconds(1)
    var idleInterval: Duration = .seconds(10)

    func run() async throws {
        let queues = PipelineBacklog.watchedQueues.sorted()
        var lastRead = ContinuousClock.now
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                backlog.record(depths: try await depths.depths(of: queues))
                lastRead = .now
            } catch {
                if ContinuousClock.now - lastRead > .seconds(10) {
                    backlog.clear()
                    logger.warning("queue depths cannot be read; publishes are taken without the backlog check", metadata: ["error": "\(error)"])
                    lastRead = .now
                }
            }
            await pauseUnlessShuttingDown(for: interval)
            // At once if a publish asked meanwhile; otherwise until one does.
            await backlog.asked.pause(upTo: idleInterval - interval)
        }
    }
}
