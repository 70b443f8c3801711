import Foundation
import NotifyAMQP

/// A message that waits in a delay queue (push retries, visual fallbacks) until it is due, then goes to its work queue:
/// the time it is due and the queue it goes to travel in its headers, and push-dispatch's `RetryForwarder` holds it
/// until then (the broker's TTL and dead-lettering are not used; see there why).
public enum DelayedForward {
    public static let dueHeader = "x-notify-due-ms"
    public static let targetHeader = "x-notify-forward-to"

    /// The properties of a message due at `due` that goes to `queue`.
    public static func properties(due: Date, to queue: String) -> AMQPProperties {
        AMQPProperties(headers: [dueHeader: .integer(Int64((due.timeIntervalSince1970 * 1000).rounded(.up))), targetHeader: .string(queue)])
    }
}
