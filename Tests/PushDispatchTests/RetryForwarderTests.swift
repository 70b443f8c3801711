import Foundation
import NotifyAMQP
import NotifyTestSupport
import NotifyWire
import Testing

@testable import PushDispatchCore

/// Retries (and visual fallbacks, parked jobs, webhook events) held until due, then put back on their work queue.
@Suite("Retry forwarder", .timeLimit(.minutes(1)))
struct RetryForwarderTests {
    let publisher = RecordingPublisher()

    /// A message waiting in a delay queue, due `seconds` from now, for `queue`.
    func waiting(for queue: String, dueIn seconds: TimeInterval, body: String, tag: UInt64) -> AMQPDelivery {
        var properties = DelayedForward.properties(due: Date().addingTimeInterval(seconds), to: queue)
        properties.headers["x-notify-reason"] = "kept"
        return .received(AMQPOutboundMessage(routingKey: "push.retry.1000ms", body: Data(body.utf8), properties: properties), tag: tag)
    }

    @Test("due messages go back to the queue their header names, without the forwarding headers, and are acked once confirmed")
    func forwardsDue() async throws {
        let deliveries = [
            waiting(for: "push.fcm.interactive", dueIn: -1, body: "first", tag: 1),
            waiting(for: "push.apns.bulk", dueIn: -2, body: "second", tag: 2),
        ]
        let dispositions = await RetryForwarder(publisher: publisher, logger: quietLogger).handle(deliveries).dispositions()
        #expect(dispositions == [.ack, .ack])
        #expect(publisher.publishes.count == 1, "due together, confirmed together")
        let forwarded = publisher.all
        #expect(forwarded.map(\.routingKey) == ["push.apns.bulk", "push.fcm.interactive"], "oldest due first")
        #expect(forwarded.map { String(decoding: $0.body, as: UTF8.self) } == ["second", "first"])
        for message in forwarded {
            #expect(message.properties.headers[DelayedForward.dueHeader] == nil)
            #expect(message.properties.headers[DelayedForward.targetHeader] == nil)
            #expect(message.properties.headers["x-notify-reason"] == "kept")
        }
    }

    @Test("a message not due yet waits while the due ones go; one still waiting at shutdown goes back to its delay queue")
    func keepsOthersWaiting() async throws {
        let deliveries = [
            waiting(for: "push.wns.interactive", dueIn: 3600, body: "later", tag: 1),
            waiting(for: "push.fcm.interactive", dueIn: -1, body: "now", tag: 2),
        ]
        let handling = await RetryForwarder(publisher: publisher, logger: quietLogger).handle(deliveries)
        let settled = Task { await handling.dispositions() }
        while publisher.publishes.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        #expect(publisher.all.map(\.routingKey) == ["push.fcm.interactive"])
        settled.cancel()
        #expect(await settled.value == [.requeue, .ack])
        #expect(publisher.all.count == 1, "the waiting one was not forwarded")
    }

    @Test("messages due a moment apart are each forwarded when due, in the order they are due")
    func forwardsInDueOrder() async throws {
        let deliveries = [
            waiting(for: "push.fcm.interactive", dueIn: 0.2, body: "second", tag: 1),
            waiting(for: "push.fcm.interactive", dueIn: 0.1, body: "first", tag: 2),
        ]
        let dispositions = await RetryForwarder(publisher: publisher, logger: quietLogger).handle(deliveries).dispositions()
        #expect(dispositions == [.ack, .ack])
        #expect(publisher.all.map { String(decoding: $0.body, as: UTF8.self) } == ["first", "second"])
    }

    @Test("with a forwarding order, messages held in several batches are forwarded in the order they are due, however late a batch's task runs")
    func ordersAcrossBatches() async throws {
        let forwarder = RetryForwarder(publisher: publisher, logger: quietLogger, order: ForwardingOrder())
        // Two batches, their messages due alternately; the one holding the earliest is handed out last and runs late.
        let early = [waiting(for: "webhooks.deliveries", dueIn: -0.3, body: "1", tag: 1), waiting(for: "webhooks.deliveries", dueIn: -0.1, body: "3", tag: 2)]
        let late = [waiting(for: "webhooks.deliveries", dueIn: -0.2, body: "2", tag: 3), waiting(for: "webhooks.deliveries", dueIn: 0.1, body: "4", tag: 4)]
        let second = await forwarder.handle(late)
        let first = await forwarder.handle(early)
        let forwardingSecond = Task { await second.dispositions() }
        try await Task.sleep(for: .milliseconds(50))
        #expect(publisher.all.isEmpty, "nothing goes before the message due first, held by a batch whose task has not run")
        let forwardingFirst = Task { await first.dispositions() }
        #expect(await forwardingFirst.value == [.ack, .ack])
        #expect(await forwardingSecond.value == [.ack, .ack])
        #expect(publisher.all.map { String(decoding: $0.body, as: UTF8.self) } == ["1", "2", "3", "4"])
    }

    @Test("a message without its due time or target is dead-lettered; the others are forwarded")
    func withoutHeaders() async throws {
        var noTarget = waiting(for: "push.fcm.interactive", dueIn: -1, body: "lost", tag: 1)
        noTarget.properties.headers[DelayedForward.targetHeader] = nil
        let deliveries = [noTarget, waiting(for: "push.fcm.interactive", dueIn: -1, body: "kept", tag: 2)]
        let dispositions = await RetryForwarder(publisher: publisher, logger: quietLogger).handle(deliveries).dispositions()
        guard case .deadLetter(let reason) = dispositions.first else {
            Issue.record("not dead-lettered: \(dispositions)")
            return
        }
        #expect(reason.contains(DelayedForward.targetHeader))
        #expect(dispositions.last == .ack)
        #expect(publisher.all.map { String(decoding: $0.body, as: UTF8.self) } == ["kept"])
    }

    @Test("a forward the broker does not confirm is tried again; at shutdown the message goes back to its delay queue, not lost")
    func unconfirmed() async throws {
        let refusing = RecordingPublisher(refusing: AMQPError(code: .notConnected, message: "not connected to the broker"))
        let handling = await RetryForwarder(publisher: refusing, logger: quietLogger)
            .handle([waiting(for: "push.fcm.interactive", dueIn: -1, body: "now", tag: 1)])
        let settled = Task { await handling.dispositions() }
        while refusing.refusedCount < 2 { try await Task.sleep(for: .milliseconds(10)) }
        settled.cancel()
        #expect(await settled.value == [.requeue])
    }
}
