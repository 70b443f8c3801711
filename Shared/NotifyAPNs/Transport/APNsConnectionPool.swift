import NIOCore
import NotifyAPNsCore

/// The APNs connections of one signing key and endpoint, usable from any thread: a batch of requests hops onto the
/// pool's event loop in one go, where `APNsConnectionScheduler` hands each request to a connection, and the caller
/// is resumed once with every answer.
struct APNsConnectionPool: Sendable {
    let endpoint: APNsTransportEndpoint
    private let scheduler: NIOLoopBoundBox<APNsConnectionScheduler>

    init(endpoint: APNsTransportEndpoint, factory: APNsConnectionFactory, maximumConnections: Int, eventLoop: any EventLoop) {
        self.endpoint = endpoint
        scheduler = .makeBoxSendingValue(
            APNsConnectionScheduler(endpoint: endpoint, factory: factory, maximumConnections: maximumConnections, eventLoop: eventLoop),
            eventLoop: eventLoop)
    }

    /// Sends the requests and answers each, in their order: a response, or an `APNsTransportError` when no
    /// connection or free stream came within `timeout` (not sent), no answer came within `timeout` of the request
    /// being written, or the connection was lost.
    func send(_ requests: [APNsTransportRequest], timeout: TimeAmount) async -> [APNsTransportAnswer] {
        guard !requests.isEmpty else { return [] }
        return await withCheckedContinuation { continuation in
            let started = NIODeadline.now()
            scheduler.eventLoop.execute { [scheduler] in
                let batch = APNsRequestBatch(count: requests.count, started: started, timeout: timeout, continuation: continuation)
                scheduler.value.enqueue(requests, answeringInto: batch)
            }
        }
    }

    /// Closes the pool: see `APNsConnectionScheduler.close()`.
    func close() -> EventLoopFuture<Void> {
        scheduler.eventLoop.flatSubmit { [scheduler] in
            scheduler.value.close()
        }
    }
}
