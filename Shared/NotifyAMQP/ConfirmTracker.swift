/// Matches publisher confirms (delivery tags counted from 1 per channel) to publish requests.
struct ConfirmTracker {
    private struct InFlight {
        var firstTag: UInt64
        var lastTag: UInt64
        var messages: [AMQPOutboundMessage]
        /// nil once the caller was answered early (its confirm was overdue); the entry stays to match the tags.
        var continuation: CheckedContinuation<Void, any Error>?
        var sentAt: ContinuousClock.Instant
        var remaining: Int
        var confirmedThrough: UInt64
        var failure: AMQPError?
    }

    private var inFlight: [InFlight] = []
    private var nextTag: UInt64 = 1
    /// Tags confirmed one by one, above their request's `confirmedThrough`.
    private var singlyConfirmed = Set<UInt64>()

    var isEmpty: Bool { inFlight.isEmpty }

    mutating func add(messages: [AMQPOutboundMessage], continuation: CheckedContinuation<Void, any Error>, at sentAt: ContinuousClock.Instant) {
        let first = nextTag
        nextTag += UInt64(messages.count)
        inFlight.append(InFlight(
            firstTag: first, lastTag: nextTag - 1, messages: messages, continuation: continuation, sentAt: sentAt,
            remaining: messages.count, confirmedThrough: first - 1, failure: nil))
    }

    /// Answers the callers of requests sent before `deadline` and still unconfirmed with `.confirmTimeout`.
    mutating func failUnconfirmed(sentBefore deadline: ContinuousClock.Instant, after timeout: Duration) {
        for index in inFlight.indices {
            guard inFlight[index].sentAt < deadline else { break }
            guard let continuation = inFlight[index].continuation else { continue }
            inFlight[index].continuation = nil
            continuation.resume(throwing: AMQPError(code: .confirmTimeout, message: "the broker confirmed nothing within \(timeout) (a memory or disk alarm blocks publishers?)"))
        }
    }

    mutating func settle(tag: UInt64, multiple: Bool, failure: AMQPError?) {
        for index in inFlight.indices {
            if inFlight[index].firstTag > tag { break }
            if multiple {
                let upTo = min(tag, inFlight[index].lastTag)
                var current = inFlight[index].confirmedThrough + 1
                while current <= upTo {
                    if singlyConfirmed.remove(current) == nil { inFlight[index].remaining -= 1 }
                    current += 1
                }
                inFlight[index].confirmedThrough = max(inFlight[index].confirmedThrough, upTo)
            } else if tag <= inFlight[index].lastTag {
                if tag > inFlight[index].confirmedThrough && singlyConfirmed.insert(tag).inserted {
                    inFlight[index].remaining -= 1
                }
            }
            if let failure, inFlight[index].failure == nil, multiple || tag <= inFlight[index].lastTag {
                inFlight[index].failure = failure
            }
        }
        completeFinished()
    }

    /// basic.return carries no delivery tag, only the message's properties: when several requests in flight
    /// hold a message with this id (callers may reuse ids), every one of them fails, since the returned one
    /// cannot be told apart and must never be reported as stored.
    mutating func markReturned(messageId: String?, reason: String) {
        for index in inFlight.indices where inFlight[index].messages.contains(where: { $0.properties.messageId == messageId }) {
            inFlight[index].failure = AMQPError(code: .unroutable, message: "the message reached no queue: \(reason)")
        }
    }

    mutating func failAll(_ error: AMQPError) {
        for request in inFlight { request.continuation?.resume(throwing: error) }
        inFlight = []
        singlyConfirmed = []
    }

    private mutating func completeFinished() {
        while let first = inFlight.first, first.remaining == 0 {
            inFlight.removeFirst()
            if !singlyConfirmed.isEmpty {
                for tag in first.firstTag...first.lastTag { singlyConfirmed.remove(tag) }
            }
            if let failure = first.failure {
                first.continuation?.resume(throwing: failure)
            } else {
                first.continuation?.resume()
            }
        }
    }
}
