import ArgumentParser

/// The cases `loadgen neighbours` measures: what app A does while the quiet app B publishes.
enum NeighbourCase: String, CaseIterable, Codable, Sendable, ExpressibleByArgument {
    case alone
    case broadcast
    case slowProvider = "slow-provider"
    case deadWebhook = "dead-webhook"
    case amqpOverLimit = "amqp-over-limit"

    /// What A does, as the report says it.
    var neighbour: String {
        switch self {
        case .alone: "none (B alone: the baseline)"
        case .broadcast: "broadcasts once to the devices of an event source"
        case .slowProvider: "publishes to Web Push subscriptions the provider answers after a delay (B's devices are Web Push too)"
        case .deadWebhook: "registers devices, each a webhook event for a receiver that never answers in time (B has a webhook too)"
        case .amqpOverLimit: "publishes over AMQP at a multiple of its rate limit"
        }
    }

    /// B's devices: Web Push where A's slow pushes go through that provider, else APNs.
    var quietDevices: DeviceKind { self == .slowProvider ? .webPush : .apns }

    /// Whether B has a webhook (and registers devices for it): beside the dead one, and alone for the baseline.
    var quietWebhook: Bool { self == .alone || self == .deadWebhook }
}
