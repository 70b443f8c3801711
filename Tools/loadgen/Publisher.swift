import Foundation
import NIOHTTP1
import NotifyAMQP
import NotifyModels

/// Publishes `count` notifications round-robin over the fixture's users, paced to a target rate with
/// a bounded number of requests in flight, and records when each one was accepted.
struct Publisher: Sendable {
    struct Settings: Sendable {
        var count: Int
        /// Notifications per second; 0 = as fast as the concurrency allows.
        var rate: Double
        var batch: Int
        var concurrency: Int
        var durationLimit: Duration
    }

    /// What happened to every notification, indexed by sequence number.
    struct Outcome: Sendable {
        /// Id ingest assigned, for accepted notifications.
        var ids: [UUID?]
        /// Wall-clock moment the 202 carrying the notification arrived.
        var acceptedAt: [Date?]
        /// Request -> answer, one value per HTTP request answered 202.
        var requestLatencies: [Duration] = []
        /// Failed notifications by status ("503", "item 400", "transport").
        var errors: [String: Int] = [:]
        var sent = 0
        var requests = 0
        var startedAt = Date()
        var endedAt = Date()
        var stoppedByDurationLimit = false
    }

    private struct RequestResult: Sendable {
        let first: Int
        let count: Int
        let answeredAt: Date
        let status: Int?  // nil: transport error
        let elapsed: Duration
        /// Per item: (status, id).
        let items: [(status: Int, id: UUID?)]
        let transportError: String?
    }

    private struct Accepted: Decodable { let id: UUID }
    private struct BatchResults: Decodable {
        struct Item: Decodable { let status: Int; let id: UUID? }
        let results: [Item]
    }

    /// How notifications reach ingest.
    enum Transport: Sendable {
        case http
        /// Straight onto the `notify.ingest` exchange as `user` (the app's broker user); "accepted" is the broker's
        /// confirm, and the ids are the ones ingest derives from each appNotificationId.
        case amqp(AMQPPublisher, user: String)
    }

    let client: JSONClient
    let transport: Transport
    let ingestURL: String
    let fixture: LoadFixture
    let settings: Settings
    let counters: LiveCounters

    func run() async -> Outcome {
        var outcome = Outcome(ids: Array(repeating: nil, count: settings.count), acceptedAt: Array(repeating: nil, count: settings.count))
        let url = "\(ingestURL)/v1/apps/\(fixture.appId)/notifications"
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = start + settings.durationLimit
        outcome.startedAt = Date()
        var transportErrorShown = false
        await withTaskGroup(of: RequestResult.self) { group in
            var next = 0
            var inFlight = 0
            var requestIndex = 0
            func record(_ result: RequestResult) {
                inFlight -= 1
                var accepted = 0
                for (offset, item) in result.items.enumerated() {
                    let seq = result.first + offset
                    if item.status == 202, let id = item.id {
                        outcome.ids[seq] = id
                        outcome.acceptedAt[seq] = result.answeredAt
                        accepted += 1
                    } else {
                        let key =
                            if result.status == nil { "transport error" }
                            else if item.status == -1 { "202 with unreadable answer" }
                            else if settings.batch > 1 && result.status == 202 { "item \(item.status)" }
                            else { "\(item.status)" }
                        outcome.errors[key, default: 0] += 1
                    }
                }
                if result.status == 202 { outcome.requestLatencies.append(result.elapsed) }
                if let error = result.transportError, !transportErrorShown {
                    transportErrorShown = true
                    FileHandle.standardError.write(Data("loadgen: publish failed: \(error)\n".utf8))
                }
                counters.addAnswered(accepted: accepted, failed: result.count - accepted)
            }
            while next < settings.count {
                if settings.rate > 0 {
                    let due = start + .seconds(Double(next) / settings.rate)
                    if due > clock.now { try? await clock.sleep(until: due) }
                }
                if clock.now >= deadline {
                    outcome.stoppedByDurationLimit = true
                    break
                }
                while inFlight >= settings.concurrency, let result = await group.next() { record(result) }
                let first = next
                let size = min(settings.batch, settings.count - next)
                next += size
                requestIndex += 1
                inFlight += 1
                counters.addSent(size)
                let body = requestBody(first: first, count: size)
                group.addTask { await send(url: url, first: first, count: size, body: body) }
            }
            outcome.sent = next
            outcome.requests = requestIndex
            while let result = await group.next() { record(result) }
        }
        outcome.endedAt = Date()
        return outcome
    }

    private func send(url: String, first: Int, count: Int, body: Data) async -> RequestResult {
        if case .amqp(let publisher, let user) = transport {
            let started = ContinuousClock.now
            do {
                try await publisher.publish(AMQPOutboundMessage(
                    exchange: QueueNames.ingestExchange, routingKey: fixture.appId, body: body,
                    properties: AMQPProperties(messageId: UUID().uuidString, userId: user)))
                let items = (first..<first + count).map { seq -> (status: Int, id: UUID?) in
                    (202, DeterministicID.notificationID(
                        appId: fixture.appId, userId: fixture.users[userIndex(ofSequence: seq)], appNotificationId: "loadgen-\(seq)"))
                }
                return RequestResult(
                    first: first, count: count, answeredAt: Date(), status: 202, elapsed: ContinuousClock.now - started, items: items, transportError: nil)
            } catch {
                return RequestResult(
                    first: first, count: count, answeredAt: Date(), status: nil, elapsed: .zero,
                    items: Array(repeating: (0, nil), count: count), transportError: "\(error)")
            }
        }
        do {
            let answer = try await client.send(.POST, url, bearer: fixture.apiKey, body: body)
            let now = Date()
            var items: [(status: Int, id: UUID?)]
            if settings.batch > 1 {
                if let decoded = try? JSONDecoder().decode(BatchResults.self, from: answer.body), decoded.results.count == count {
                    items = decoded.results.map { ($0.status, $0.id) }
                } else {
                    items = Array(repeating: (answer.status == 202 ? -1 : answer.status, nil), count: count)
                }
            } else {
                let id = answer.status == 202 ? (try? JSONDecoder().decode(Accepted.self, from: answer.body))?.id : nil
                items = [(answer.status == 202 && id == nil ? -1 : answer.status, id)]
            }
            return RequestResult(first: first, count: count, answeredAt: now, status: answer.status, elapsed: answer.elapsed, items: items, transportError: nil)
        } catch {
            return RequestResult(
                first: first, count: count, answeredAt: Date(), status: nil, elapsed: .zero,
                items: Array(repeating: (0, nil), count: count), transportError: "\(error)")
        }
    }

    private struct Notification: Encodable {
        struct Payload: Encodable { let visualContent: VisualContent }
        struct VisualContent: Encodable { let title: String; let body: String }
        let userId: String
        let appNotificationId: String
        let payload: Payload
    }

    private struct Batch: Encodable { let notifications: [Notification] }

    func userIndex(ofSequence seq: Int) -> Int { seq % fixture.users.count }

    private func requestBody(first: Int, count: Int) -> Data {
        let notifications = (first..<first + count).map { seq in
            Notification(
                userId: fixture.users[userIndex(ofSequence: seq)],
                appNotificationId: "loadgen-\(seq)",
                payload: .init(visualContent: .init(title: "loadgen #\(seq)", body: "Load test notification \(seq) of \(settings.count)")))
        }
        let encoder = JSONEncoder()
        // Encoding plain strings cannot fail.
        if settings.batch > 1 { return (try? encoder.encode(Batch(notifications: notifications))) ?? Data() }
        return (try? encoder.encode(notifications[0])) ?? Data()
    }
}
