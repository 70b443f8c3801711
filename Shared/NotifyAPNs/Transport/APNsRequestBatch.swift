import NIOCore
import NotifyAPNsCore

/// The requests of one `APNsConnectionPool.send`, answered together on the pool's event loop: each request's
/// answer goes to its place, and the caller is resumed once, when the last one came.
final class APNsRequestBatch {
    /// How long a request may wait for a connection or a free stream, and then, once written, for its answer.
    let timeout: TimeAmount
    /// The last moment a waiting request may still be written; later it fails unsent (`.notSent`).
    let sendDeadline: NIODeadline
    private let started: NIODeadline
    private var answers: [APNsTransportAnswer]
    private var unanswered: Int
    private let continuation: CheckedContinuation<[APNsTransportAnswer], Never>

    init(count: Int, started: NIODeadline, timeout: TimeAmount, continuation: CheckedContinuation<[APNsTransportAnswer], Never>) {
        self.started = started
        self.timeout = timeout
        sendDeadline = started + timeout
        answers = Array(repeating: APNsTransportAnswer(result: .failure(.notSent), elapsed: .zero), count: count)
        unanswered = count
        self.continuation = continuation
    }

    /// The answer of request `index`; every request is answered exactly once.
    func answer(_ index: Int, with result: Result<APNsTransportResponse, APNsTransportError>) {
        answers[index] = APNsTransportAnswer(result: result, elapsed: .now() - started)
        unanswered -= 1
        if unanswered == 0 {
            continuation.resume(returning: answers)
            answers = []
        }
    }
}

@available(*, unavailable)
extension APNsRequestBatch: Sendable {}

/// Where the answer of one request goes: its place in the batch it was sent with.
struct APNsAnswerSlot {
    let batch: APNsRequestBatch
    let index: Int
    /// How often the request was sent again after a connection gave it back unanswered.
    var resends = 0

    var sendDeadline: NIODeadline { batch.sendDeadline }

    /// The deadline of the answer to a request written now: a full timeout on the wire, however long it waited.
    func answerDeadline(writtenAt now: NIODeadline) -> NIODeadline {
        now + batch.timeout
    }

    func succeed(_ response: APNsTransportResponse) {
        batch.answer(index, with: .success(response))
    }

    func fail(_ error: APNsTransportError) {
        batch.answer(index, with: .failure(error))
    }
}
