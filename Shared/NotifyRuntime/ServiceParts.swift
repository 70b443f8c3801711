import Logging
import NotifyAMQP
import ServiceLifecycle

/// A service as its build function makes it (storage's, fanout's, push-dispatch's; ingest's is a Hummingbird
/// application): its parts, none connected yet. `run()` runs them as one `ServiceGroup` inside the group that runs it
/// (the executable's, which shuts down gracefully on SIGTERM or SIGINT): they start in order and shut down in reverse,
/// so the parts others depend on, such as the database pool and the publisher, come first.
public struct ServiceParts: Service, CustomStringConvertible {
    /// Every part, in the order it starts.
    public let services: [any Service]
    /// Each queue the service takes messages from, with its consumer (among `services`, or started by one of them).
    public let consumers: [(queue: String, consumer: AMQPConsumer)]
    private let logger: Logger

    public init(services: [any Service], consumers: [(queue: String, consumer: AMQPConsumer)], logger: Logger) {
        self.services = services
        self.consumers = consumers
        self.logger = logger
    }

    public func run() async throws {
        try await ServiceGroup(configuration: ServiceGroupConfiguration(services: services, logger: logger)).run()
    }

    /// What ServiceLifecycle logs as the service's name.
    public var description: String {
        "ServiceParts(\(services.count) services, consuming \(consumers.map(\.queue).joined(separator: ", ")))"
    }
}
