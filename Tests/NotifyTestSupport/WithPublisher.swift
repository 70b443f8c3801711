import Logging
import NotifyAMQP

/// Runs `body` with a publisher started outside a ServiceGroup (declaring `topology`) once it is connected, and shuts the
/// publisher down afterwards, also when `body` failed. Fails when it does not connect within 15 s.
public func withPublisher<Result: Sendable>(
    _ configuration: AMQPConfiguration, logger: Logger, topology: AMQPTopology = AMQPTopology(),
    _ body: (AMQPPublisher) async throws -> Result
) async throws -> Result {
    let publisher = AMQPPublisher(configuration: configuration, topology: topology, logger: logger)
    publisher.startIfNeeded()
    let outcome: Swift.Result<Result, any Error>
    if await publisher.waitUntilConnected(timeout: .seconds(15)) {
        do {
            outcome = .success(try await body(publisher))
        } catch {
            outcome = .failure(error)
        }
    } else {
        outcome = .failure(TestFailure("the publisher did not connect to \(configuration) within 15 s (see the test log for the reason)"))
    }
    await publisher.shutdown()
    return try outcome.get()
}
