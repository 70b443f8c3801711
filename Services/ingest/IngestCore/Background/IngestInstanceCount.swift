import Logging
import NotifyAMQP
import NotifyModels
import NotifyRuntime
import ServiceLifecycle

/// Counts the ingest instances alive, as the consumers of `notify.ingest` (each instance has one), every `interval`,
/// and hands the count to the rate limiter, which divides every app's limit by it. While the count cannot be read, the
/// last one stands.
struct IngestInstanceCount: Service {
    let reader: AMQPQueueDepths
    let limiter: PublishRateLimiter
    let logger: Logger
    var interval: Duration = .seconds(5)

    func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                if let consumers = try await reader.consumers(of: QueueNames.ingestQueue), consumers != limiter.instances {
                    logger.info("ingest instances alive changed; each takes its share of the apps' limits", metadata: ["instances": "\(consumers)"])
                    limiter.instances = consumers
                }
            } catch {
                logger.debug("the ingest instances cannot be counted now", metadata: ["error": "\(error)"])
            }
            await pauseUnlessShuttingDown(for: interval)
        }
    }
}
