import ArgumentParser

/// `loadgen`: drives the notification service end to end and reports throughput, latency and loss.
@main
struct LoadGenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "loadgen",
        abstract: "Load generator for the notification service (local stack only).",
        discussion: """
            Creates its own app, APNs key and device subscriptions, publishes notifications through \
            ingest, and matches every expected (notification, device) push against what the provider \
            sandbox recorded. Reports accepted/s, delivered pushes/s, end-to-end latency (202 -> sandbox \
            receivedAt), publish latency, lost and duplicated pushes, and each service's peak memory.
            Exits with a non-zero status when any push was lost.
            """,
        subcommands: [
            HTTPLoadCommand.self, OverloadCommand.self, SweepReportCommand.self, FanoutBenchCommand.self, StorageBenchCommand.self, BroadcastBenchCommand.self,
            BrokerCeilingCommand.self, MicroBenchCommand.self, WakeupBenchCommand.self, IdleCostCommand.self, ChaosCommand.self, NeighboursCommand.self,
        ]
    )
}
