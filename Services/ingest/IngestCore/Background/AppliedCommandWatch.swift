import Foundation
import Logging
import NotifyDatabase
import NotifyModels
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// Learns when storage applied a command: listens on `StorageCommand.appliedChannel`, where storage
/// announces (at commit) the commands whose senders wait to answer with what was stored.
///
/// A caller registers its command before sending it, so an announcement cannot arrive unseen. While the
/// listening connection is down, `waitUntilApplied` answers `nil` at once and the caller polls instead.
final class AppliedCommandWatch: Service, Sendable {
    private enum Expectation {
        case expected
        case waiting(CheckedContinuation<Bool?, Never>)
        case applied
        /// The wait ended without an announcement (timeout, or the connection dropped).
        case givenUp(Bool?)
    }

    private struct State {
        var expectations: [UUID: Expectation] = [:]
        var listening = false
    }

    private let client: PostgresClient
    private let logger: Logger
    private let state = Mutex(State())

    init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Listens until shutdown, connecting again (after a pause) whenever the connection drops.
    func run() async throws {
        await cancelWhenGracefulShutdown { [self] in
            await client.listen(on: StorageCommand.appliedChannel) {
                state.withLock { $0.listening = true }
            } received: { payload in
                received(payload)
            } stopped: { error in
                if let error { logger.warning("not listening for applied commands; polling meanwhile", metadata: ["error": "\(String(reflecting: error))"]) }
                stopListening()
            }
        }
    }

    /// Registers `commandId` before its command is sent; `forget` (or `waitUntilApplied`) removes it.
    func expect(_ commandId: UUID) {
        state.withLock { $0.expectations[commandId] = .expected }
    }

    func forget(_ commandId: UUID) {
        state.withLock { _ = $0.expectations.removeValue(forKey: commandId) }
    }

    /// Whether announcements are heard now (while not, `waitUntilApplied` answers nil at once).
    var isListening: Bool {
        state.withLock { $0.listening }
    }

    /// Whether storage announced the expected command already, without waiting; forgets it if so.
    func takeIfApplied(_ commandId: UUID) -> Bool {
        state.withLock { state in
            guard case .applied = state.expectations[commandId] else { return false }
            state.expectations[commandId] = nil
            return true
        }
    }

    /// True once storage announced the expected command, false after `timeout`, nil when not listening
    /// (the caller then polls). Forgets the command either way.
    func waitUntilApplied(_ commandId: UUID, timeout: Duration) async -> Bool? {
        defer { forget(commandId) }
        guard state.withLock({ $0.listening }) else { return nil }
        return await withTaskGroup(of: Bool?.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let answer: Bool?? = self.state.withLock { state in
                        switch state.expectations[commandId] {
                        case .expected where state.listening:
                            state.expectations[commandId] = .waiting(continuation)
                            return .none
                        case .applied: return .some(true)
                        case .givenUp(let answer): return .some(answer)
                        case .expected, .waiting, nil: return .some(nil)
                        }
                    }
                    if let answer { continuation.resume(returning: answer) }
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                self.giveUp(commandId, answering: false)
                return false
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    private func received(_ payload: String) {
        for text in payload.split(separator: ",") {
            guard let commandId = UUID(uuidString: String(text)) else { continue }
            markApplied(commandId)
        }
    }

    /// Resumes the caller waiting for `commandId`, or records that it was applied.
    private func markApplied(_ commandId: UUID) {
        let waiting: CheckedContinuation<Bool?, Never>? = state.withLock { state in
            switch state.expectations[commandId] {
            case .expected:
                state.expectations[commandId] = .applied
                return nil
            case .waiting(let continuation):
                state.expectations[commandId] = .applied
                return continuation
            case .applied, .givenUp, nil:
                return nil
            }
        }
        waiting?.resume(returning: true)
    }

    /// Ends the wait for `commandId` with `answer` unless it was applied first.
    private func giveUp(_ commandId: UUID, answering answer: Bool?) {
        let waiting: CheckedContinuation<Bool?, Never>? = state.withLock { state in
            switch state.expectations[commandId] {
            case .expected:
                state.expectations[commandId] = .givenUp(answer)
                return nil
            case .waiting(let continuation):
                state.expectations[commandId] = .givenUp(answer)
                return continuation
            case .applied, .givenUp, nil:
                return nil
            }
        }
        waiting?.resume(returning: answer)
    }

    /// Stops listening: callers waiting now are answered nil and poll.
    private func stopListening() {
        let commandIds = state.withLock { state in
            state.listening = false
            return Array(state.expectations.keys)
        }
        for commandId in commandIds { giveUp(commandId, answering: nil) }
    }
}
