import Foundation
import NIOCore
import NotifyAMQP
import NotifyModels

/// Publishes straight onto the `notify.ingest` exchange as `user` (the app's broker user), one message per request
/// from a task of its own: "accepted" is the broker's confirm, and the ids are the ones ingest derives from each
/// appNotificationId. Every message asks for the verdict on `replies`' queue.
final class AMQPPublishSender: PublishSender {
    private let eventLoop: any EventLoop
    private let publisher: AMQPPublisher
    private let user: String
    private let replies: AMQPReplyCollector
    private let fixture: LoadFixture
    private let bodies: NotificationBodies

    init(
        eventLoop: any EventLoop, publisher: AMQPPublisher, user: String, replies: AMQPReplyCollector, fixture: LoadFixture,
        bodies: NotificationBodies
    ) {
        self.eventLoop = eventLoop
        self.publisher = publisher
        self.user = user
        self.replies = replies
        self.fixture = fixture
        self.bodies = bodies
    }

    func send(_ request: PublishRequest, completion: @escaping (PublishResult) -> Void) {
        let promise = eventLoop.makePromise(of: PublishResult.self)
        promise.completeWithTask { [publisher, user, replies, fixture, bodies] in
            let started = ContinuousClock.now
            let correlationId = String(request.first)
            replies.published(correlationId)
            do {
                try await publisher.publish(AMQPOutboundMessage(
                    exchange: QueueNames.ingestExchange, routingKey: fixture.appId, body: Data(request.body),
                    properties: AMQPProperties(
                        messageId: UUID().uuidString, correlationId: correlationId, replyTo: replies.queue, userId: user)))
                let items = (request.first..<request.first + request.count).map { seq -> PublishAnswer.Item in
                    (202, bodies.notificationId(ofSequence: seq, appId: fixture.appId))
                }
                return PublishResult(
                    first: request.first, count: request.count, answeredAt: Date(), status: 202, elapsed: ContinuousClock.now - started,
                    items: items, retryAfter: false, transportError: nil)
            } catch {
                return .transportError(error, for: request)
            }
        }
        promise.futureResult.assumeIsolated().whenSuccess(completion)
    }

    func close() {}
}
