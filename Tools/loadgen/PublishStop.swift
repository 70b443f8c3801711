import Synchronization

/// Tells a publisher to send no more: set from any task, read by its pump before each request.
final class PublishStop: Sendable {
    private let stopped = Atomic(false)

    var isStopped: Bool { stopped.load(ordering: .relaxed) }

    func stop() { stopped.store(true, ordering: .relaxed) }
}
