import Logging
import NotifyAMQP
import ServiceLifecycle

/// Keeps trying an effect that must not be dropped (a database write, a confirmed publish) while its
/// input stays unacknowledged: pauses 0.1 s, doubling up to 5 s, between attempts, and gives up only
/// when the service is shutting down, so the input goes back to its queue instead.
public enum RetryUntilShutdown {
    /// The operation's result, or nil once shutdown (or cancellation) began before it succeeded.
    /// An error for which `isPermanent` answers true is thrown at once instead of retried.
    public static func run<Result>(
        _ what: String, logger: Logger, isPermanent: (any Error) -> Bool = { _ in false },
        _ operation: () async throws -> Result
    ) async throws -> Result? {
        var delay = Duration.milliseconds(100)
        while true {
            do {
                return try await operation()
            } catch where isPermanent(error) {
                throw error
            } catch {
                logger.warning("could not \(what); retrying", metadata: ["error": "\(String(reflecting: error))"])
            }
            if Task.isCancelled || Task.isShuttingDownGracefully { return nil }
            try? await Task.sleep(for: delay)
            delay = min(delay * 2, .seconds(5))
        }
    }

    /// Whether `operation` succeeded before shutdown began (for effects no error can make pointless).
    public static func succeeded(_ what: String, logger: Logger, _ operation: () async throws -> Void) async -> Bool {
        (try? await run(what, logger: logger, operation)) != nil
    }

    /// What a consumer answers when the effect did not happen before shutdown: put back what would have been acked.
    public static func requeueing(_ dispositions: [AMQPDisposition]) -> [AMQPDisposition] {
        dispositions.map { $0 == .ack ? .requeue : $0 }
    }
}
