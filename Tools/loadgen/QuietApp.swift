import Foundation
import Histogram

/// App B of `loadgen neighbours`: single notifications over HTTP at a fixed rate, round-robin over users with one device
/// each, its 202 → push latency read from the sandbox (each device's pushes asked for apart, so a neighbour's pushes
/// cost it nothing to skip); with a webhook, it also registers devices at a steady rate and times each event's way
/// from its `createdAt` to its arrival at B's receiver.
struct QuietApp: Sendable {
    /// How B publishes in one case.
    struct Plan: Sendable {
        var rate: Double
        /// Publishing stops after this long, or earlier at `stop`.
        var seconds: Int
        var stop: PublishStop
        /// Devices registered per second while publishing (webhook events), with a webhook.
        var registrationsPerSecond: Double
        var drainTimeout: Duration
    }

    let setup: StackSetup
    let fixture: LoadFixture
    /// B's pushes as the sandbox recorded them (a broadcasting neighbour reads them too).
    let deliveries: DeliveryCollector
    let receiver: SandboxWebhookReceiver?
    /// B's sent, answered and delivered counts, logged once a second while it runs.
    let counters: LiveCounters

    /// Creates B with `users` one-device users of kind `devices`, and a webhook receiver answering at once when `webhook`.
    static func setUp(setup: StackSetup, users: Int, devices: DeviceKind, webhook: Bool, runTag: String) async throws -> QuietApp {
        let fixture = try await setup.run(users: users, devicesPerUser: 1, concurrency: 16, runTag: "quiet \(runTag)", devices: devices)
        let receiver = webhook
            ? try await SandboxWebhookReceiver.create(
                setup: setup, name: "quiet-\(fixture.appId)", appId: fixture.appId, apiKey: fixture.apiKey, delaySeconds: 0)
            : nil
        let counters = LiveCounters()
        let deliveries = DeliveryCollector(
            client: setup.client, sandboxURL: setup.sandboxURL, tokens: Set(fixture.deviceTokens.joined()), counters: counters,
            provider: devices, perToken: true)
        try await deliveries.startAtNewest()
        return QuietApp(setup: setup, fixture: fixture, deliveries: deliveries, receiver: receiver, counters: counters)
    }

    /// What B's publishing left to measure.
    struct Published: Sendable {
        let outcome: Publisher.Outcome
        /// The devices B registered while publishing, with a webhook.
        let registered: PacedRegistrations.Counts?
        let began: Date
    }

    /// Publishes (and registers devices, with a webhook) as `plan` says.
    func publish(_ plan: Plan) async throws -> Published {
        let count = Swift.max(Int((plan.rate * Double(plan.seconds)).rounded()), 1)
        let began = Date()
        let poller = Task { await deliveries.pollUntilCancelled() }
        let progress = Task { await HTTPLoadCommand.showProgress(counters, count: count, devices: 1) }
        let registering = receiver.map { _ in
            Task {
                await PacedRegistrations(setup: setup, appId: fixture.appId, signingKey: fixture.clientSigningKey, prefix: "quiet-registered")
                    .run(rate: plan.registrationsPerSecond, count: Int(plan.registrationsPerSecond * Double(plan.seconds)), stop: plan.stop)
            }
        }
        let publisher = Publisher(
            transport: try .http(ingestURL: setup.ingestURL, fixture: fixture), fixture: fixture,
            settings: .init(
                count: count, schedule: .fixed(rate: plan.rate, count: count), batch: 1, concurrency: 32,
                durationLimit: .seconds(plan.seconds + 30), stop: plan.stop),
            counters: counters)
        let outcome = await publisher.run()
        poller.cancel()
        progress.cancel()
        await poller.value
        await progress.value
        return Published(outcome: outcome, registered: await registering?.value, began: began)
    }

    /// Waits up to `drainTimeout` for every accepted notification's push (and webhook event), then measures them all.
    func result(of published: Published, drainTimeout: Duration) async throws -> QuietResult {
        let outcome = published.outcome
        let answers = AnswerCounts(outcome, sequences: 0..<outcome.ids.count)
        _ = await deliveries.drain(expected: answers.accepted, timeout: drainTimeout)
        // Duplicates sent right after the last push are counted too.
        try? await Task.sleep(for: .seconds(1))
        try? await deliveries.pollOnce()
        let analysis = Analysis(outcome: outcome, fixture: fixture, pushes: await deliveries.pushes)
        return QuietResult(
            sent: outcome.sent, answers: answers, delivered: analysis.deliveredPushes, late: 0, lost: analysis.lost,
            duplicated: analysis.duplicated, publishSeconds: outcome.endedAt.timeIntervalSince(outcome.startedAt),
            latency: LatencyStats(analysis.endToEnd),
            webhook: try await webhookResult(registered: published.registered, since: published.began, timeout: drainTimeout))
    }

    /// B's webhook events since `since`: waits up to `timeout` for one per registration, then their latencies.
    private func webhookResult(registered: PacedRegistrations.Counts?, since: Date, timeout: Duration) async throws -> QuietResult.Webhook? {
        guard let receiver, let registered else { return nil }
        let deadline = ContinuousClock.now + timeout
        var latencies = try await receiver.latencies(since: since)
        while latencies.count < registered.registered, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(500))
            latencies = try await receiver.latencies(since: since)
        }
        var histogram = LatencyStats.histogram()
        for latency in latencies { histogram.record(LatencyStats.microseconds(latency)) }
        return QuietResult.Webhook(
            registrations: registered, arrived: latencies.count, lost: Swift.max(registered.registered - latencies.count, 0),
            latency: LatencyStats(histogram))
    }
}

/// What became of B's notifications (and webhook events) in one case.
struct QuietResult: Codable, Sendable {
    /// B's webhook events: one per device registered while publishing.
    struct Webhook: Codable, Sendable {
        var registrations: PacedRegistrations.Counts
        /// Events created since B began publishing that reached B's receiver.
        var arrived: Int
        var lost: Int
        /// The event's `createdAt` → its arrival at B's receiver.
        var latency: LatencyStats
    }

    var sent: Int
    var answers: AnswerCounts
    var delivered: Int
    /// Of `delivered`, the pushes that arrived only after the first drain timeout, once the neighbour's load was lifted.
    var late: Int
    var lost: Int
    var duplicated: Int
    var publishSeconds: Double
    /// 202 → the push's arrival at the sandbox.
    var latency: LatencyStats
    var webhook: Webhook?
}
