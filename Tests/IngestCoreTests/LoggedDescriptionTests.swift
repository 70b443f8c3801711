import Foundation
import Logging
import NotifyAMQP
import NotifyBrokerAdmin
import NotifyModels
import Testing

@testable import IngestCore

/// ServiceLifecycle describes every service at debug level (`String(describing:)`), and a service is often a struct
/// holding clients and configurations: what it prints must name them, never their secrets.
@Suite struct LoggedDescriptionTests {
    @Test("the management client, a service holding a broker connection, a broker configuration and the keyring are described without a secret")
    func descriptionsHoldNoSecret() throws {
        let password = "management-pw-3f9c"
        let administration = RabbitMQManagementClient(
            configuration: .init(baseURL: "http://127.0.0.1:15672", user: "notify", password: password, virtualHost: "notify"))
        let key = Data((0..<32).map { UInt8($0) }).base64EncodedString()
        let keyring = try SecretKeyring(parsing: "k1:\(key)")
        let amqp = try AMQPConfiguration(url: "amqp://notify:amqp-pw-77aa@127.0.0.1:5672/notify")
        let monitor = BacklogMonitor(
            depths: AMQPQueueDepths(configuration: amqp, logger: Logger(label: "test")), backlog: PipelineBacklog(maximumDepth: 10),
            logger: Logger(label: "test"))
        let described = [
            String(describing: administration), String(describing: monitor), String(describing: keyring), String(describing: amqp),
            String(reflecting: administration),
        ]
        let secrets = [password, Data("notify:\(password)".utf8).base64EncodedString(), key, "amqp-pw-77aa"]
        for text in described {
            for secret in secrets { #expect(!text.contains(secret), "\(text)") }
        }
        #expect(described[0].contains("http://127.0.0.1:15672"), "it still says which API: \(described[0])")
    }
}
