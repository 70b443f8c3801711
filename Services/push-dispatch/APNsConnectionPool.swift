import NIOCore

/// The APNs connections of one signing key and endpoint, usable from any thread: each request hops onto the pool's
/// event loop, where `APNsConnectionScheduler` hands it to a connection, and is answered through its own promise.
struct APNsConnectionPool: Sendable {
    let endpoint: APNsTransportEndpoint
    private let scheduler: NIOLoopBoundBox<APNsConnectionScheduler>

    init(endpoint: APNsTransportEndpoint, factory: APNsConnectionFactory, maximumConnections: Int, eventLoop: any EventLoop) {
        self.endpoint = endpoint
        scheduler = .makeBoxSendingValue(
            APNsConnectionScheduler(endpoint: endpoint, factory: factory, maximumConnections: maximumConnections, eventLoop: eventLoop),
            eventLoop: eventLoop)
    }

    /// Sends the request; the future fails with an `APNsTransportError` when no answer came within `timeout`
    /// (waiting for a connection or a free stream included) or the connection was lost.
    func send(_ request: APNsTransportRequest, timeout: TimeAmount) -> EventLoopFuture<APNsTransportResponse> {
        let eventLoop = scheduler.eventLoop
        let promise = eventLoop.makePromise(of: APNsTransportResponse.self)
        let deadline = NIODeadline.now() + timeout
        if eventLoop.inEventLoop {
            scheduler.value.enqueue(request, deadline: deadline, promise: promise)
        } else {
            eventLoop.execute { [scheduler] in
                scheduler.value.enqueue(request, deadline: deadline, promise: promise)
            }
        }
        return promise.futureResult
    }

    /// Closes the pool: see `APNsConnectionScheduler.close()`.
    func close() -> EventLoopFuture<Void> {
        scheduler.eventLoop.flatSubmit { [scheduler] in
            scheduler.value.close()
        }
    }
}
