import Metrics
import NotifyModels
import NotifyRuntime
import Synchronization

/// Whether the pipeline behind ingest is too far behind to take more: when a queue between the services
/// (`storage.commands`, `fanout.changes`, `push.<provider>`) holds more than `maximumDepth` messages ready, publishes are
/// refused with 503 `pipeline_backlogged` and Retry-After (over AMQP the consumer waits), so that an accepted
/// notification is not queued behind minutes of others; taking resumes once every queue is below 80 % of the limit.
/// `BacklogMonitor` feeds it the depths about once a second while publishes come (each one that asks nudges it), and
/// every 10 s while none do. A limit of 0 turns it off.
final class PipelineBacklog: Sendable {
    /// The queues whose depth is watched: the interactive lane's. A broadcast's backlog (`fanout.broadcasts`,
    /// `push.<provider>.bulk`) is worked through in its own lane and refuses nobody's publishes.
    static let watchedQueues: Set<String> = Set([QueueNames.storageCommands, QueueNames.fanoutChanges] + Platform.allCases.map { QueueNames.pushQueue($0) })

    let maximumDepth: Int
    /// Nudged by every publish that asks for a refusal: the monitor reads the depths often only while publishes come.
    let asked = Nudge()
    /// The queue over the limit and its depth while publishes are refused; nil while they are taken.
    private let over = Mutex<(queue: String, depth: Int)?>(nil)
    private let refusing = Gauge(label: "notify_ingest_backlog_refusing")

    init(maximumDepth: Int) {
        self.maximumDepth = maximumDepth
    }

    /// Takes the queues' depths (other queues are ignored).
    func record(depths: [String: Int]) {
        guard maximumDepth > 0 else { return }
        let deepest = depths.filter { Self.watchedQueues.contains($0.key) }.max { $0.value < $1.value }
        let state = over.withLock { over -> (queue: String, depth: Int)? in
            if let deepest, deepest.value > maximumDepth {
                over = (deepest.key, deepest.value)
            } else if over != nil, (deepest?.value ?? 0) < maximumDepth * 4 / 5 {
                over = nil
            } else if over != nil, let deepest {
                over = (deepest.key, deepest.value)
            }
            return over
        }
        refusing.record(state == nil ? 0 : 1)
    }

    /// Takes publishes again (the depths could not be read for a while: refusing on old figures would refuse forever).
    func clear() {
        over.withLock { $0 = nil }
        refusing.record(0)
    }

    /// The answer to a publish while the pipeline is backlogged; nil while publishes are taken.
    func refusal() -> APIFailure? {
        guard maximumDepth > 0 else { return nil }
        asked.nudge()
        guard let (queue, depth) = over.withLock({ $0 }) else { return nil }
        return APIFailure(
            .serviceUnavailable, code: "pipeline_backlogged",
            message: "the pipeline is behind (\(queue) holds \(depth) messages, over NOTIFY_MAX_QUEUE_DEPTH \(maximumDepth)); nothing was accepted, try again after Retry-After",
            retryAfterSeconds: 2)
    }
}
