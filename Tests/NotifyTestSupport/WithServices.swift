import Logging
import ServiceLifecycle

/// Runs `services` in a ServiceGroup while `body` runs, then shuts them down gracefully (the last service first; a
/// shutdown taking over 15 s is escalated to cancellation) and waits until they finished, also when `body` failed.
public func withServices<Result: Sendable>(
    _ services: [any Service], logger: Logger, _ body: () async throws -> Result
) async throws -> Result {
    var configuration = ServiceGroupConfiguration(services: services, logger: logger)
    configuration.maximumGracefulShutdownDuration = .seconds(15)
    let group = ServiceGroup(configuration: configuration)
    return try await withThrowingTaskGroup(of: Void.self) { tasks in
        tasks.addTask { try await group.run() }
        let outcome: Swift.Result<Result, any Error>
        do {
            outcome = .success(try await body())
        } catch {
            outcome = .failure(error)
        }
        await group.triggerGracefulShutdown()
        try await tasks.waitForAll()
        return try outcome.get()
    }
}
