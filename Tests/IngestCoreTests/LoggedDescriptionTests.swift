import Foundation
import Logging
import NotifyAMQP
import NotifyModels
import Testing

@testable import IngestCore

/// ServiceLifecycle describes every service at debug level (`String(describing:)`), and a service is often a struct
/// holding clients and configurations: what it prints must name them, never their secrets.
@Suite struct LoggedDescriptionTests {
    @Test("a service holding a broker connection, a broker configuration and the keyring are described without a secret")
    func descriptionsHoldNoSecret() throws {
        let key = Data((0..<32).map { UInt8($0) }).base64EncodedString()
        let keyring = try SecretKeyring(parsing: "k1:\(key)")
        let amqp = try AMQPConfiguration(url: "amqp://notify:amqp-pw-77aa@127.0.0.1:5672/notify")
        let monitor = BacklogMonitor(
            depths: AMQPQueueDepths(configuration: amqp, logger: Logger(label: "test")), backlog: PipelineBacklog(maximumDepth: 10),
            logger: Logger(label: "test"))
        let binding = LiveQueueBinding(
            bindings: AMQPQueueBindings(configuration: amqp, logger: Logger(label: "test")), queue: "notify.live.x", logger: Logger(label: "test"))
        let described = [String(describing: monitor), String(describing: binding), String(describing: keyring), String(describing: amqp)]
        for text in described {
            for secret in [key, "amqp-pw-77aa"] { #expect(!text.contains(secret), "\(text)") }
        }
    }
}
