import NIOCore
import NotifyAPNsCore

/// Hands the requests of one signing key and endpoint to its connections, on the pool's event loop.
///
/// A request goes to the first connection with a free stream. When every connection is at the server's stream limit
/// (or none is ready yet), requests wait in order and another connection is opened, one at a time, up to
/// `maximumConnections`; a connection closed with requests waiting is replaced the same way. A connection that
/// fails before it is ready fails the waiting requests unless another connection can serve them. Once a second
/// while there is work, requests that waited out their timeout fail unsent (`.notSent`), and streams whose answer
/// did not come within a timeout of their own from being written are answered `.timedOut`.
///
/// A request a connection gives back unanswered (GOAWAY above its last stream id, a refused stream, the connection
/// lost before any answer) waits again at the head of the line for another connection, up to `maximumResends`
/// times; then it is answered why, and dispatch retries it through a retry queue.
final class APNsConnectionScheduler {
    private struct WaitingRequest {
        let request: APNsTransportRequest
        let slot: APNsAnswerSlot
    }

    private enum Lifecycle {
        case running
        case closing(EventLoopPromise<Void>)
        case closed
    }

    private static let sweepInterval = TimeAmount.seconds(1)
    /// How often one request is sent again on another connection after one gave it back.
    static let maximumResends = 2

    private let eventLoop: any EventLoop
    private let endpoint: APNsTransportEndpoint
    private let factory: APNsConnectionFactory
    private let maximumConnections: Int
    /// Connections connecting or taking requests.
    private var open: [APNsConnection] = []
    /// Connections finishing their streams before they close.
    private var draining: [APNsConnection] = []
    private var waiting = CircularBuffer<WaitingRequest>()
    private var sweep: Scheduled<Void>?
    private var lifecycle = Lifecycle.running

    init(endpoint: APNsTransportEndpoint, factory: APNsConnectionFactory, maximumConnections: Int, eventLoop: any EventLoop) {
        self.endpoint = endpoint
        self.factory = factory
        self.maximumConnections = max(maximumConnections, 1)
        self.eventLoop = eventLoop
    }

    /// Starts each request on the first connection with a free stream, in order; the rest wait for one.
    func enqueue(_ requests: [APNsTransportRequest], answeringInto batch: APNsRequestBatch) {
        guard case .running = lifecycle else {
            for index in requests.indices {
                batch.answer(index, with: .failure(.poolClosed))
            }
            return
        }
        var next = requests.startIndex
        if waiting.isEmpty {
            for connection in open {
                while next < requests.endIndex, connection.freeStreams > 0 {
                    connection.start(requests[next], answeringInto: APNsAnswerSlot(batch: batch, index: next))
                    next += 1
                }
            }
        }
        while next < requests.endIndex {
            waiting.append(WaitingRequest(request: requests[next], slot: APNsAnswerSlot(batch: batch, index: next)))
            next += 1
        }
        openConnectionIfNeeded()
        scheduleSweep()
    }

    /// Takes no more requests, answers the waiting ones `.poolClosed`, and closes each connection once its streams
    /// are answered (each within its timeout). The future completes when every connection is closed.
    func close() -> EventLoopFuture<Void> {
        switch lifecycle {
        case .closing(let promise):
            return promise.futureResult
        case .closed:
            return eventLoop.makeSucceededVoidFuture()
        case .running:
            let promise = eventLoop.makePromise(of: Void.self)
            lifecycle = .closing(promise)
            while let request = waiting.popFirst() {
                request.slot.fail(.poolClosed)
            }
            for connection in open + draining {
                connection.closeWhenIdle()
            }
            finishClosingIfIdle()
            return promise.futureResult
        }
    }

    private func openConnectionIfNeeded() {
        guard case .running = lifecycle, !waiting.isEmpty, open.count < maximumConnections,
            !open.contains(where: \.isConnecting)
        else { return }
        let connection = APNsConnection(endpoint: endpoint, connectTimeout: factory.connectTimeout, delegate: self)
        open.append(connection)
        factory.connect(connection, to: endpoint, on: eventLoop).assumeIsolated().whenFailure { error in
            connection.connectFailed(error)
        }
    }

    private func scheduleSweep() {
        guard sweep == nil else { return }
        sweep = eventLoop.assumeIsolated().scheduleTask(in: Self.sweepInterval) {
            self.sweep = nil
            self.expire(now: .now())
        }
    }

    private func expire(now: NIODeadline) {
        while let first = waiting.first, first.slot.sendDeadline <= now {
            waiting.removeFirst().slot.fail(.notSent)
        }
        for connection in open + draining {
            connection.expireStreams(now: now)
        }
        if !waiting.isEmpty || (open + draining).contains(where: \.hasOpenStreams) {
            scheduleSweep()
        }
    }

    private func finishClosingIfIdle() {
        guard case .closing(let promise) = lifecycle, open.isEmpty, draining.isEmpty else { return }
        lifecycle = .closed
        sweep?.cancel()
        sweep = nil
        promise.succeed()
    }
}

extension APNsConnectionScheduler: APNsConnectionDelegate {
    func connectionMayTakeStreams(_ connection: APNsConnection) {
        guard case .running = lifecycle else {
            connection.closeWhenIdle()
            return
        }
        guard !waiting.isEmpty else { return }
        startWaiting(on: connection)
        openConnectionIfNeeded()
    }

    func connection(_ connection: APNsConnection, gaveBack requests: [APNsUnansweredRequest]) {
        guard case .running = lifecycle else {
            for given in requests {
                given.slot.fail(given.reason)
            }
            return
        }
        for given in requests.reversed() {
            guard given.slot.resends < Self.maximumResends else {
                given.slot.fail(given.reason)
                continue
            }
            var slot = given.slot
            slot.resends += 1
            waiting.prepend(WaitingRequest(request: given.request, slot: slot))
        }
        for other in open where other.freeStreams > 0 {
            startWaiting(on: other)
        }
        openConnectionIfNeeded()
        scheduleSweep()
    }

    /// Starts waiting requests, in order, while `connection` has free streams; those past their send deadline fail.
    private func startWaiting(on connection: APNsConnection) {
        let now = NIODeadline.now()
        while connection.freeStreams > 0, let next = waiting.popFirst() {
            if next.slot.sendDeadline <= now {
                next.slot.fail(.notSent)
            } else {
                connection.start(next.request, answeringInto: next.slot)
            }
        }
    }

    func connectionStoppedTakingStreams(_ connection: APNsConnection) {
        if let index = open.firstIndex(where: { $0 === connection }) {
            open.remove(at: index)
            draining.append(connection)
        }
        openConnectionIfNeeded()
    }

    func connectionClosed(_ connection: APNsConnection, neverReady failure: APNsTransportError?) {
        open.removeAll { $0 === connection }
        draining.removeAll { $0 === connection }
        if let failure {
            // Not replaced at once (no connect loop): the next request, or a free stream elsewhere, moves on.
            if open.isEmpty {
                while let request = waiting.popFirst() {
                    request.slot.fail(failure)
                }
            }
        } else {
            openConnectionIfNeeded()
        }
        finishClosingIfIdle()
    }
}

@available(*, unavailable)
extension APNsConnectionScheduler: Sendable {}
