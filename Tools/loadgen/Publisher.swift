import Foundation
import NIOCore
import NIOPosix
import NotifyAMQP

/// Publishes `count` notifications round-robin over the fixture's users, paced to a rate schedule with
/// a bounded number of requests in flight, and records how each one was answered.
struct Publisher: Sendable {
    struct Settings: Sendable {
        var count: Int
        /// When each notification is due (none: as fast as the concurrency allows).
        var schedule: RateSchedule
        var batch: Int
        var concurrency: Int
        var durationLimit: Duration
        /// Ends the sending early when set (what was sent is still answered and recorded).
        var stop: PublishStop?
    }

    /// One request's answer.
    struct Answer: Sendable {
        /// Its notifications, `first..<first + count`.
        let first: Int
        let count: Int
        /// The HTTP status; `Outcome.transportError` when none came.
        let status: Int
        /// Request -> answer.
        let elapsed: Duration
        let answeredAt: Date
        /// Whether the answer carried Retry-After.
        let retryAfter: Bool
    }

    /// What happened to every notification, indexed by sequence number.
    struct Outcome: Sendable {
        /// `statuses` of a notification never sent (the duration limit stopped the run first).
        static let notSent: Int16 = -2
        /// `statuses` of a notification answered 202 whose id could not be read.
        static let unreadable: Int16 = -1
        /// `statuses` of a notification whose request got no answer.
        static let transportError: Int16 = 0

        /// Id ingest assigned, for accepted notifications.
        var ids: [UUID?]
        /// Wall-clock moment the 202 carrying the notification arrived.
        var acceptedAt: [Date?]
        /// The status of each notification: its request's, or in a batch its item's (or one of the values above).
        var statuses: [Int16]
        /// Every request's answer, in the order they came.
        var answers: [Answer] = []
        var sent = 0
        var requests = 0
        var startedAt = Date()
        var endedAt = Date()
        var stoppedByDurationLimit = false
    }

    /// How notifications reach ingest.
    enum Transport: Sendable {
        /// `request` (a POST to /v1/apps/{appId}/notifications) on keep-alive connections of loadgen's own client.
        case http(PlainHTTPEndpoint, HTTPPostRequest)
        /// Straight onto the `notify.ingest` exchange as `user` (the app's broker user); "accepted" is the broker's
        /// confirm, and the ids are the ones ingest derives from each appNotificationId; the verdicts go to `replies`.
        case amqp(AMQPPublisher, user: String, replies: AMQPReplyCollector)

        /// Publishing to the fixture's app at ingest's `ingestURL`, which must be plain `http://`. Throws when the URL
        /// or the API key cannot go into a request.
        static func http(ingestURL: String, fixture: LoadFixture) throws -> Transport {
            let endpoint = try PlainHTTPEndpoint(url: ingestURL)
            return .http(endpoint, try HTTPPostRequest(endpoint: endpoint, path: "/v1/apps/\(fixture.appId)/notifications", bearer: fixture.apiKey))
        }
    }

    let transport: Transport
    let fixture: LoadFixture
    let settings: Settings
    let counters: LiveCounters

    /// Publishes from one event loop of the shared group (see `PublishPump`).
    func run() async -> Outcome {
        let bodies = NotificationBodies(users: fixture.users, total: settings.count, batched: settings.batch > 1)
        let makeSender: @Sendable (any EventLoop) -> any PublishSender =
            switch transport {
            case .http(let endpoint, let request):
                { [settings] eventLoop in
                    HTTPPublishSender(
                        eventLoop: eventLoop, endpoint: endpoint, request: request, batched: bodies.batched, concurrency: settings.concurrency)
                }
            case .amqp(let publisher, let user, let replies):
                { [fixture] eventLoop in
                    AMQPPublishSender(eventLoop: eventLoop, publisher: publisher, user: user, replies: replies, fixture: fixture, bodies: bodies)
                }
            }
        let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
        return await withCheckedContinuation { continuation in
            eventLoop.execute {
                PublishPump(eventLoop: eventLoop, settings: settings, bodies: bodies, sender: makeSender(eventLoop), counters: counters) {
                    continuation.resume(returning: $0)
                }.start()
            }
        }
    }
}
