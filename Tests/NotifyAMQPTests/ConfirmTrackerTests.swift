import Foundation
import Testing

@testable import NotifyAMQP

/// How the publisher matches the broker's confirms (delivery tags counted from 1 on the channel) to the callers of
/// `publish`: acks, multiple acks, nacks, returned messages, overdue confirms and a dropped connection. No broker needed.
@Suite("AMQPPublisher's confirm tracking")
struct ConfirmTrackerTests {
    /// A caller of `publish` waiting for its answer: the continuation the tracker answers, and the task that waits on it.
    struct Caller {
        let continuation: CheckedContinuation<Void, any Error>
        private let waiting: Task<Void, any Error>

        init() async throws {
            let (handed, hand) = AsyncStream.makeStream(of: CheckedContinuation<Void, any Error>.self)
            waiting = Task { try await withCheckedThrowingContinuation { hand.yield($0) } }
            var iterator = handed.makeAsyncIterator()
            continuation = try #require(await iterator.next())
        }

        /// nil when the publish was confirmed, else the code of the error it failed with.
        func answer() async -> AMQPError.Code? {
            do {
                try await waiting.value
                return nil
            } catch {
                return (error as? AMQPError)?.code
            }
        }
    }

    let start = ContinuousClock.now

    func messages(_ ids: String...) -> [AMQPOutboundMessage] {
        ids.map { AMQPOutboundMessage(routingKey: "q", body: Data(), properties: AMQPProperties(messageId: $0)) }
    }

    @Test("a publish is confirmed once every one of its messages is acked, in whatever order")
    func singleAcks() async throws {
        var tracker = ConfirmTracker()
        let caller = try await Caller()
        tracker.add(messages: messages("a", "b", "c"), continuation: caller.continuation, at: start)
        tracker.settle(tag: 2, multiple: false, failure: nil)
        tracker.settle(tag: 1, multiple: false, failure: nil)
        #expect(!tracker.isEmpty, "one message is unconfirmed")
        tracker.settle(tag: 3, multiple: false, failure: nil)
        #expect(tracker.isEmpty)
        #expect(await caller.answer() == nil)
    }

    @Test("a multiple ack confirms every publish up to its tag, and no further")
    func multipleAck() async throws {
        var tracker = ConfirmTracker()
        let callers = [try await Caller(), try await Caller(), try await Caller()]
        tracker.add(messages: messages("a", "b"), continuation: callers[0].continuation, at: start)
        tracker.add(messages: messages("c"), continuation: callers[1].continuation, at: start)
        tracker.add(messages: messages("d", "e"), continuation: callers[2].continuation, at: start)
        tracker.settle(tag: 4, multiple: true, failure: nil)
        #expect(await callers[0].answer() == nil)
        #expect(await callers[1].answer() == nil)
        #expect(!tracker.isEmpty, "the third publish's last message is unconfirmed")
        tracker.settle(tag: 5, multiple: false, failure: nil)
        #expect(await callers[2].answer() == nil)
        #expect(tracker.isEmpty)
    }

    @Test("a nack fails the publish its message belongs to, and only that one")
    func nack() async throws {
        var tracker = ConfirmTracker()
        let (refused, confirmed) = (try await Caller(), try await Caller())
        tracker.add(messages: messages("a", "b"), continuation: refused.continuation, at: start)
        tracker.add(messages: messages("c"), continuation: confirmed.continuation, at: start)
        tracker.settle(tag: 1, multiple: false, failure: nil)
        tracker.settle(tag: 2, multiple: false, failure: AMQPError(code: .nacked, message: "refused"))
        tracker.settle(tag: 3, multiple: false, failure: nil)
        #expect(await refused.answer() == .nacked)
        #expect(await confirmed.answer() == nil)
        #expect(tracker.isEmpty)
    }

    @Test("a message returned as unroutable fails its publish, though the broker acks it afterwards")
    func returned() async throws {
        var tracker = ConfirmTracker()
        let (returned, confirmed) = (try await Caller(), try await Caller())
        tracker.add(messages: messages("a", "b"), continuation: returned.continuation, at: start)
        tracker.add(messages: messages("c"), continuation: confirmed.continuation, at: start)
        tracker.markReturned(messageId: "b", reason: "NO_ROUTE")
        tracker.settle(tag: 3, multiple: true, failure: nil)
        #expect(await returned.answer() == .unroutable)
        #expect(await confirmed.answer() == nil)
    }

    @Test("a publish unconfirmed past the timeout fails as confirmTimeout; its late confirm answers no one twice")
    func overdue() async throws {
        var tracker = ConfirmTracker()
        let (overdue, recent) = (try await Caller(), try await Caller())
        tracker.add(messages: messages("a"), continuation: overdue.continuation, at: start)
        tracker.add(messages: messages("b"), continuation: recent.continuation, at: start + .seconds(5))
        tracker.failUnconfirmed(sentBefore: start + .seconds(1), after: .seconds(1))
        #expect(await overdue.answer() == .confirmTimeout)
        #expect(!tracker.isEmpty, "its tag still counts")
        tracker.settle(tag: 2, multiple: true, failure: nil)
        #expect(await recent.answer() == nil)
        #expect(tracker.isEmpty)
    }

    @Test("a dropped connection fails every publish in flight as connectionLost")
    func dropped() async throws {
        var tracker = ConfirmTracker()
        let callers = [try await Caller(), try await Caller()]
        tracker.add(messages: messages("a", "b"), continuation: callers[0].continuation, at: start)
        tracker.add(messages: messages("c"), continuation: callers[1].continuation, at: start)
        tracker.settle(tag: 1, multiple: false, failure: nil)
        tracker.failAll(AMQPError(code: .connectionLost, message: "the connection dropped before the broker confirmed"))
        #expect(tracker.isEmpty)
        #expect(await callers[0].answer() == .connectionLost)
        #expect(await callers[1].answer() == .connectionLost)
    }
}
