import AsyncHTTPClient
import Foundation
import NIOCore
import NotifyAMQP
import NotifyModels

/// What became of one publish of a chaos run.
struct ChaosPublish: Codable, Sendable {
    enum Transport: String, Codable, Sendable { case http, amqp }

    let seq: Int
    let transport: Transport
    /// Seconds from the start of the run.
    let sentAt: Double
    /// HTTP status (202 accepted), 202 for a broker confirm over AMQP; nil: no answer (connection refused or
    /// lost, timeout, a publish the broker did not confirm).
    let status: Int?
    /// A 503 came with Retry-After.
    let retryAfter: Bool
    let error: String?

    var accepted: Bool { status == 202 }
}

/// Publishes one notification at a time at a fixed rate, alternating ingest's HTTP API (round-robin over the
/// ingest instances) and the `notify.ingest` exchange (as the app's broker user, confirmed), without retrying:
/// every publish is recorded as it was answered.
struct ChaosPublisher: Sendable {
    let ingestURLs: [String]
    let fixture: LoadFixture
    let bodies: NotificationBodies
    let http: HTTPClient
    let amqp: AMQPPublisher
    let rate: Double
    let counters: LiveCounters

    static let timeout: Duration = .seconds(10)

    func run(count: Int, from start: ContinuousClock.Instant) async -> [ChaosPublish] {
        await withTaskGroup(of: ChaosPublish.self) { group in
            for seq in 0..<count {
                try? await Task.sleep(until: start + .microseconds(Int(Double(seq) / rate * 1_000_000)))
                group.addTask {
                    let sentAt = ChaosFaultRunner.seconds(since: start)
                    counters.addSent(1)
                    let outcome = seq % 2 == 0 ? await publishOverHTTP(seq, sentAt: sentAt) : await publishOverAMQP(seq, sentAt: sentAt)
                    counters.addAnswered(accepted: outcome.accepted ? 1 : 0, failed: outcome.accepted ? 0 : 1)
                    return outcome
                }
            }
            var outcomes: [ChaosPublish] = []
            for await outcome in group { outcomes.append(outcome) }
            return outcomes.sorted { $0.seq < $1.seq }
        }
    }

    private func publishOverHTTP(_ seq: Int, sentAt: Double) async -> ChaosPublish {
        var request = HTTPClientRequest(url: "\(ingestURLs[(seq / 2) % ingestURLs.count])/v1/apps/\(fixture.appId)/notifications")
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(fixture.apiKey)")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: bodies.body(first: seq, count: 1)))
        do {
            let response = try await http.execute(request, timeout: .seconds(10))
            _ = try await response.body.collect(upTo: 1 << 20)
            return ChaosPublish(
                seq: seq, transport: .http, sentAt: sentAt, status: Int(response.status.code),
                retryAfter: response.headers.first(name: "retry-after") != nil, error: nil)
        } catch {
            return ChaosPublish(seq: seq, transport: .http, sentAt: sentAt, status: nil, retryAfter: false, error: "\(error)")
        }
    }

    private func publishOverAMQP(_ seq: Int, sentAt: Double) async -> ChaosPublish {
        let message = AMQPOutboundMessage(
            exchange: QueueNames.ingestExchange, routingKey: fixture.appId, body: Data(bodies.body(first: seq, count: 1)),
            properties: AMQPProperties(messageId: "chaos-\(fixture.appId)-\(seq)", userId: fixture.broker?.user))
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await amqp.publish(message) }
                group.addTask {
                    try await Task.sleep(for: Self.timeout)
                    throw LoadGenError("no confirm within \(Self.timeout)")
                }
                defer { group.cancelAll() }
                try await group.next()
            }
            return ChaosPublish(seq: seq, transport: .amqp, sentAt: sentAt, status: 202, retryAfter: false, error: nil)
        } catch {
            return ChaosPublish(seq: seq, transport: .amqp, sentAt: sentAt, status: nil, retryAfter: false, error: "\(error)")
        }
    }
}
