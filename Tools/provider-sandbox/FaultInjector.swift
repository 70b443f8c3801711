import NIOCore
import Synchronization

/// A scripted answer for pushes to one device token: an error status, a delay, or a dropped connection.
struct Fault: Codable, Sendable {
    let faultId: String
    let provider: String
    let token: String
    /// The status to answer; absent or 200 means "answer normally" (after the delay, if any).
    let status: Int?
    let reason: String?
    /// The `retry-after` header's value: seconds, or an HTTP-date (RFC 9110 allows both).
    let retryAfter: String?
    let delayMilliseconds: Int
    let dropConnection: Bool
    /// How many more requests this fault answers; absent means every request until removed.
    var times: Int?
    /// Milliseconds since the epoch for the body of a 410 answer; absent means "now".
    let timestamp: Int64?

    /// Whether the fault ends the request with an error (rather than only delaying it).
    var answersWithError: Bool {
        status.map { $0 != 200 } ?? false
    }
}

/// The active faults, matched by provider and device token, oldest first.
final class FaultInjector: Sendable {
    private let faults = Mutex<[Fault]>([])

    func add(_ fault: Fault) {
        faults.withLock { $0.append(fault) }
    }

    var all: [Fault] {
        faults.withLock { $0 }
    }

    /// Removes one fault; false if there was none with that id.
    func remove(id: String) -> Bool {
        faults.withLock { faults in
            guard let index = faults.firstIndex(where: { $0.faultId == id }) else { return false }
            faults.remove(at: index)
            return true
        }
    }

    func removeAll() {
        faults.withLock { $0.removeAll() }
    }

    /// The fault that answers this request, if any, counting the use against its `times`.
    func take(provider: String, token: Substring) -> Fault? {
        faults.withLock { faults in
            guard let index = faults.firstIndex(where: { $0.provider == provider && $0.token == token }) else {
                return nil
            }
            let fault = faults[index]
            if let times = fault.times {
                if times <= 1 { faults.remove(at: index) } else { faults[index].times = times - 1 }
            }
            return fault
        }
    }
}

/// What an injected fault makes of a request once its delay has passed.
enum FaultOutcome {
    /// No fault, or one that only delays: answer normally.
    case proceed
    /// Answer with this fault's error status, in the provider's own error shape.
    case fail(Fault)
    /// The connection was closed without an answer (recorded as a rejection with status 0).
    case dropped
}

extension FaultInjector {
    /// Takes the fault for a push to `token`, waits its delay, and drops `connection` if it says so.
    func apply(
        provider: String,
        token: Substring,
        connection: any Channel,
        recorder: DeliveryRecorder
    ) async throws -> FaultOutcome {
        guard let fault = take(provider: provider, token: token) else { return .proceed }
        if fault.delayMilliseconds > 0 {
            try await Task.sleep(for: .milliseconds(fault.delayMilliseconds))
        }
        let outcome = outcome(of: fault, provider: provider, token: token, recorder: recorder)
        if case .dropped = outcome {
            try? await connection.close()
        }
        return outcome
    }

    /// What `fault` makes of a push to `token` once its delay has passed. A dropped connection is recorded as a
    /// rejection here; closing it is the caller's.
    func outcome(of fault: Fault, provider: String, token: Substring, recorder: DeliveryRecorder) -> FaultOutcome {
        if fault.dropConnection {
            recorder.recordRejection(provider: provider, deviceToken: String(token), status: 0, reason: "ConnectionDropped")
            return .dropped
        }
        return fault.answersWithError ? .fail(fault) : .proceed
    }
}
