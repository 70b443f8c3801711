/// A of the `dead-webhook` case: registers devices at a steady rate, each a `subscription.created` event for its
/// webhook, whose receiver answers only after longer than push-dispatch waits (10 s), so every attempt times out and
/// is retried. Its webhook is removed when the case ends, so its waiting events get no more attempts.
struct DeadWebhookNeighbour: Neighbour {
    let setup: StackSetup
    let app: (appId: String, clientSigningKey: String)
    let receiver: SandboxWebhookReceiver
    let rate: Double

    static func setUp(setup: StackSetup, rate: Double, receiverDelaySeconds: Int) async throws -> DeadWebhookNeighbour {
        let app = try await setup.createApp(runTag: "neighbour dead webhook")
        let receiver = try await SandboxWebhookReceiver.create(
            setup: setup, name: "dead-\(app.appId)", appId: app.appId, apiKey: app.apiKey, delaySeconds: receiverDelaySeconds)
        return DeadWebhookNeighbour(setup: setup, app: (app.appId, app.clientSigningKey), receiver: receiver, rate: rate)
    }

    func run(_ context: NeighbourContext) async throws -> NeighbourSummary {
        let counts = await PacedRegistrations(setup: setup, appId: app.appId, signingKey: app.clientSigningKey, prefix: "noisy-registered")
            .run(rate: rate, count: Int(rate * Double(context.seconds)))
        let arrived = try await receiver.log().arrived
        return NeighbourSummary(
            accepted: counts.registered, refused: 0, delivered: arrived, lost: nil,
            detail: "\(NumberText.grouped(counts.registered)) devices registered at \(NumberText.grouped(rate))/s (\(counts.failed) failed), "
                + "each a webhook event; \(NumberText.grouped(arrived)) POSTs reached its receiver, none answered in time")
    }

    func finish(_ summary: NeighbourSummary?, drainTimeout: Duration) async -> NeighbourSummary? {
        do { try await receiver.removeWebhook() } catch { HTTPLoadCommand.log("\(error)") }
        return summary
    }
}
