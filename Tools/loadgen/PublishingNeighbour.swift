import Foundation
import NotifyRuntime

/// A publishing single notifications at a fixed rate, round-robin over its one-device users, its pushes collected at
/// the sandbox: to Web Push subscriptions the sandbox answers after a delay (`slow-provider`), or over AMQP as its
/// broker user at a multiple of its rate limit (`amqp-over-limit`; the refusals come as replies).
struct PublishingNeighbour: Neighbour {
    let setup: StackSetup
    let fixture: LoadFixture
    let amqp: AMQPSession?
    let deliveries: DeliveryCollector
    /// Its distinct pushes delivered so far.
    let counters = LiveCounters()
    let rate: Double
    /// Faults were scripted at the sandbox for A's devices.
    let scriptedFaults: Bool

    /// A with `users` Web Push subscriptions, each push to them answered after `delay`.
    static func slowProvider(setup: StackSetup, users: Int, rate: Double, delay: Duration) async throws -> PublishingNeighbour {
        let fixture = try await setup.run(users: users, devicesPerUser: 1, concurrency: 16, runTag: "neighbour slow provider", devices: .webPush)
        for token in fixture.deviceTokens.joined() {
            let fault = SandboxFault(provider: DeviceKind.webPush.rawValue, token: token, delayMilliseconds: Int(delay.inSeconds * 1000))
            if let refusal = await fault.add(client: setup.client, sandboxURL: setup.sandboxURL) { throw LoadGenError(refusal) }
        }
        return try await PublishingNeighbour(setup: setup, fixture: fixture, amqp: nil, rate: rate, devices: .webPush, scriptedFaults: true)
    }

    /// A with `users` APNs devices and a broker user, its rate limit set to `limit` per second, publishing at `rate`
    /// over AMQP (the broker at `amqpURL`).
    static func overLimit(setup: StackSetup, users: Int, limit: Int, rate: Double, amqpURL: String) async throws -> PublishingNeighbour {
        let fixture = try await setup.run(users: users, devicesPerUser: 1, concurrency: 16, runTag: "neighbour over its limit", brokerAccess: true)
        guard let broker = fixture.broker else { throw LoadGenError("ingest answered no broker credentials for the app") }
        try await AppRateLimit(perSecond: limit).apply(client: setup.client, ingest: setup.ingestURL, admin: setup.adminToken, appId: fixture.appId)
        let amqp = try await AMQPSession.open(url: amqpURL, broker: broker)
        return try await PublishingNeighbour(setup: setup, fixture: fixture, amqp: amqp, rate: rate, devices: .apns, scriptedFaults: false)
    }

    private init(setup: StackSetup, fixture: LoadFixture, amqp: AMQPSession?, rate: Double, devices: DeviceKind, scriptedFaults: Bool) async throws {
        self.setup = setup
        self.fixture = fixture
        self.amqp = amqp
        self.rate = rate
        self.scriptedFaults = scriptedFaults
        deliveries = DeliveryCollector(
            client: setup.client, sandboxURL: setup.sandboxURL, tokens: Set(fixture.deviceTokens.joined()), counters: counters,
            provider: devices)
        try await deliveries.startAtNewest()
    }

    func run(_ context: NeighbourContext) async throws -> NeighbourSummary {
        let count = Swift.max(Int((rate * Double(context.seconds)).rounded()), 1)
        let poller = Task { await deliveries.pollUntilCancelled() }
        let publisher = Publisher(
            transport: try amqp?.transport ?? .http(ingestURL: setup.ingestURL, fixture: fixture), fixture: fixture,
            settings: .init(
                count: count, schedule: .fixed(rate: rate, count: count), batch: 1, concurrency: 64, durationLimit: .seconds(context.seconds + 30)),
            counters: LiveCounters())
        var outcome = await publisher.run()
        poller.cancel()
        await poller.value
        if let amqp {
            await amqp.replies.waitForAnswers(outcome.requests, timeout: context.drainTimeout)
            outcome = outcome.withVerdicts(of: amqp.replies)
        }
        let answers = AnswerCounts(outcome, sequences: 0..<count)
        let started = ContinuousClock.now
        let drained = await deliveries.drain(expected: answers.accepted, timeout: context.drainTimeout)
        let analysis = Analysis(outcome: outcome, fixture: fixture, pushes: await deliveries.pushes)
        let via = amqp == nil ? "HTTP" : "AMQP"
        let latency = LatencyStats(analysis.endToEnd)
        return NeighbourSummary(
            accepted: answers.accepted, refused: answers.refused, delivered: analysis.deliveredPushes, lost: analysis.lost,
            detail: "\(NumberText.grouped(outcome.sent)) sent over \(via) at \(NumberText.grouped(rate))/s (\(answers.summary)); "
                + "202 → push p50 \(NumberText.grouped(latency.p50)) ms, max \(NumberText.grouped(latency.max)) ms; "
                + (drained ? String(format: "last push %.0f s after publishing ended", (ContinuousClock.now - started).inSeconds) : "drain timed out"))
    }

    func finish(_ summary: NeighbourSummary?, drainTimeout: Duration) async -> NeighbourSummary? {
        if scriptedFaults {
            do { try await SandboxFault.removeAll(client: setup.client, sandboxURL: setup.sandboxURL) } catch { HTTPLoadCommand.log("\(error)") }
        }
        await amqp?.close()
        guard var summary, let lost = summary.lost, lost > 0 else { return summary }
        _ = await deliveries.drain(expected: summary.accepted, timeout: drainTimeout)
        let late = Swift.max(counters.snapshot.delivered - summary.delivered, 0)
        summary.late = late
        summary.delivered += late
        summary.lost = lost - late
        return summary
    }
}
