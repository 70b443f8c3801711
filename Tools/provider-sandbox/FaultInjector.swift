import Synchronization

/// A scripted answer for pushes to one device token: an error status, a delay, or a dropped connection.
struct Fault: Codable, Sendable {
    let faultId: String
    let provider: String
    let token: String
    /// The status to answer; absent or 200 means "answer normally" (after the delay, if any).
    let status: Int?
    let reason: String?
    /// Seconds for the `retry-after` header.
    let retryAfter: Int?
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
