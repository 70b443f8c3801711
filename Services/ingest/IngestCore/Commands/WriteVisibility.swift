import Foundation
import NotifyModels

/// Sends a write to storage and waits until it is applied, so operator, registration and state-change
/// calls can answer with what is stored (read-your-writes). Storage announces such writes when it commits
/// them (`AppliedCommandWatch`); while that is not heard, this polls a store read. Publishing never waits here.
struct WriteVisibility: Sendable {
    let sender: CommandSender
    let watch: AppliedCommandWatch
    var timeout: Duration = .seconds(5)

    /// Sends `command`, then answers what `read` finds once storage applied it; nil if that does not show within the
    /// timeout (`read` answering nil or failing is "not yet"). Throws `APIFailure.brokerUnavailable` when the send failed.
    func send<Value: Sendable>(
        _ command: StorageCommand, thenRead read: @escaping @Sendable () async throws -> Value?
    ) async throws(APIFailure) -> Value? {
        watch.expect(command.commandId)
        do {
            try await sender.send([command])
        } catch {
            watch.forget(command.commandId)
            throw error
        }
        switch await watch.waitUntilApplied(command.commandId, timeout: timeout) {
        case .some:
            // Announced (or timed out: a last look, in case only the announcement was lost).
            return try? await read()
        case nil:
            return await poll(read, until: ContinuousClock.now + timeout)
        }
    }

    /// Sends `commands` in one message, then waits until `read` answers a value, also for what storage does after
    /// applying them (a broker user it creates in RabbitMQ): it polls once storage announced the last command (or at
    /// once while announcements are not heard). Answers nil if no value shows within the timeout. Throws
    /// `APIFailure.brokerUnavailable` when the send failed.
    func send<Value: Sendable>(
        _ commands: [StorageCommand], thenAwait read: @escaping @Sendable () async throws -> Value?
    ) async throws(APIFailure) -> Value? {
        let deadline = ContinuousClock.now + timeout
        guard let last = commands.last?.commandId else { return await poll(read, until: deadline) }
        watch.expect(last)
        do {
            try await sender.send(commands)
        } catch {
            watch.forget(last)
            throw error
        }
        _ = await watch.waitUntilApplied(last, timeout: timeout)
        return await poll(read, until: deadline)
    }

    /// Calls `read` until it answers a value; nil if none shows by `deadline`.
    private func poll<Value: Sendable>(_ read: @Sendable () async throws -> Value?, until deadline: ContinuousClock.Instant) async -> Value? {
        var pause = Duration.milliseconds(2)
        while true {
            if let value = try? await read() { return value }
            guard ContinuousClock.now < deadline else { return nil }
            try? await Task.sleep(for: pause)
            pause = min(pause * 2, .milliseconds(50))
        }
    }
}
