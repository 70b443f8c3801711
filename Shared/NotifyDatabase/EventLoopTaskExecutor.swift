import NIOCore

/// A task executor that runs its jobs on one NIO event loop.
///
/// Under `withTaskExecutorPreference(EventLoopTaskExecutor(connection.eventLoop))`, the code that sends a
/// connection's queries and reads their replies runs on the thread that receives those replies: a reply resumes the
/// waiting code without waking a thread of the cooperative pool, and the next query is written without waking the
/// event loop. NIO has no task executor of its own here (2.101); this is the few lines it takes. Measured on this
/// project's 2-vCPU VM, where a thread's wake-up costs 17-25 µs of CPU (docs/benchmarks-history.md, "2026-11-25,
/// 90b04ab" and "2026-11-25, ea49d65"): storage's transactions on their event loop cut its context switches per notification from 11 to 6-7.4
/// and its CPU from 257-266 to 212-230 µs at 1,000 requests/s (3 devices each), and from 38-40 switches and
/// 930-1,200 µs to 24-25 and 685-855 µs at 100/s.
///
/// The event loop serves its other connections only between jobs: what runs here is a transaction's work between its
/// queries, not long computations.
public final class EventLoopTaskExecutor: TaskExecutor {
    public let eventLoop: any EventLoop

    public init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
