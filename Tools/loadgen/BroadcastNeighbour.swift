import Foundation
import NotifyRuntime

/// A of the `broadcast` case: one publish to an event source whose subscribers are seeded in PostgreSQL (as `loadgen
/// broadcast` seeds them), counted until its last push arrives or its timeout passes; then B stops publishing. Its
/// pushes are counted without reading them: every delivery the sandbox recorded since B began that is not B's.
struct BroadcastNeighbour: Neighbour {
    let audience: BroadcastAudience
    let seedTime: Duration
    let timeout: Duration

    static func setUp(setup: StackSetup, devices: Int, databaseURL: String, timeout: Duration) async throws -> BroadcastNeighbour {
        let app = try await setup.createApp(runTag: "neighbour broadcast")
        let audience = BroadcastAudience(
            client: setup.client, ingestURL: setup.ingestURL, app: (app.appId, app.apiKey), eventSource: "loadgen-neighbours", devices: devices)
        let seedTime = try await audience.seed(databaseURL: databaseURL)
        HTTPLoadCommand.log("neighbours: seeded \(devices) subscribed devices in \(seedTime)")
        return BroadcastNeighbour(audience: audience, seedTime: seedTime, timeout: timeout)
    }

    func run(_ context: NeighbourContext) async throws -> NeighbourSummary {
        let deliveries = context.quietDeliveries
        let published = ContinuousClock.now
        _ = try await audience.publish()
        var arrived = 0
        var lastProgress = published
        while arrived < audience.devices, ContinuousClock.now - published < timeout {
            try await Task.sleep(for: .milliseconds(250))
            arrived = await deliveries.newestId - deliveries.startId - deliveries.pushes.count - deliveries.unreadable
            if ContinuousClock.now - lastProgress > .seconds(5) {
                HTTPLoadCommand.log("neighbours: \(arrived) of \(audience.devices) broadcast pushes arrived")
                lastProgress = ContinuousClock.now
            }
        }
        let elapsed = (ContinuousClock.now - published).inSeconds
        context.quietStop.stop()
        return NeighbourSummary(
            accepted: 1, refused: 0, delivered: arrived, lost: Swift.max(audience.devices - arrived, 0),
            detail: "one broadcast to \(NumberText.grouped(audience.devices)) devices: 202 → last push "
                + String(format: "%.1f s", elapsed) + " (\(NumberText.grouped(Double(arrived) / Swift.max(elapsed, 0.001))) pushes/s); seeded in "
                + String(format: "%.1f s", seedTime.inSeconds))
    }

    func finish(_ summary: NeighbourSummary?, drainTimeout: Duration) async -> NeighbourSummary? { summary }
}
