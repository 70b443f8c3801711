import Foundation
import Logging
import NotifyAMQP
import NotifyBrokerAdmin
import NotifyRuntime
import Testing

@testable import StorageCore

/// Storage's side of the broker's administration, without a broker: its settings, the dead-letter policy, and what the
/// services holding the administrator's client print when ServiceLifecycle describes them.
@Suite struct BrokerAdministrationTests {
    private static let amqp = try! AMQPConfiguration(url: "amqp://notify:amqp-pw-77aa@127.0.0.1:5672/notify")

    @Test("the management URL: the administrator's, NOTIFY_AMQP_URL's user on port 15672 when unset, none when off, refused when not a URL with credentials")
    func managementSettings() throws {
        func settings(_ url: String?) throws -> BrokerAdministrationSettings {
            let environment = try ServiceEnvironment(
                BrokerAdministrationSettings.variables, environment: url.map { ["NOTIFY_RABBITMQ_MANAGEMENT_URL": $0] } ?? [:])
            return try BrokerAdministrationSettings(environment: environment, amqp: Self.amqp)
        }
        let given = try #require(try settings("http://admin:s3cret@rabbit:15673").management)
        #expect((given.baseURL, given.user, given.password, given.virtualHost) == ("http://rabbit:15673", "admin", "s3cret", "notify"))
        let derived = try #require(try settings(nil).management)
        #expect((derived.baseURL, derived.user, derived.password) == ("http://127.0.0.1:15672", "notify", "amqp-pw-77aa"))
        #expect(try settings("off").management == nil)
        #expect(throws: ConfigurationError.self) { try settings("rabbit:15672") }
        let defaults = try settings(nil)
        #expect(defaults.deadLetterBounds == DeadLetterBounds(maximumMessages: 10_000, maximumBytes: 104_857_600, maximumAge: .seconds(604_800)))
    }

    @Test("notify.ingest.dead is bounded by a policy for that queue alone: length, bytes, age, and refusing copies beyond them")
    func deadLetterPolicy() {
        let policy = IngestDeadLetterPolicy(
            administration: RabbitMQManagementClient(configuration: .init(baseURL: "http://127.0.0.1:15672", user: "u", password: "p", virtualHost: "notify")),
            bounds: DeadLetterBounds(maximumMessages: 5, maximumBytes: 1024, maximumAge: .seconds(60)), logger: Logger(label: "test")
        ).policy
        #expect(policy.name == "notify-ingest-dead" && policy.pattern == #"^notify\.ingest\.dead$"# && policy.applyTo == "queues")
        #expect(policy.definition == [
            "max-length": .integer(5), "max-length-bytes": .integer(1024), "overflow": .string("reject-publish"), "message-ttl": .integer(60_000),
        ])
    }

    @Test("the services holding the administrator's client are described without its password")
    func descriptionsHoldNoSecret() {
        let password = "management-pw-3f9c"
        let administration = RabbitMQManagementClient(
            configuration: .init(baseURL: "http://127.0.0.1:15672", user: "notify", password: password, virtualHost: "notify"))
        let policy = IngestDeadLetterPolicy(
            administration: administration, bounds: DeadLetterBounds(maximumMessages: 1, maximumBytes: 1, maximumAge: .seconds(1)),
            logger: Logger(label: "test"))
        let described = [String(describing: administration), String(reflecting: administration), String(describing: policy)]
        for text in described {
            for secret in [password, Data("notify:\(password)".utf8).base64EncodedString()] { #expect(!text.contains(secret), "\(text)") }
        }
        #expect(described[0].contains("http://127.0.0.1:15672"), "it still says which API: \(described[0])")
    }
}
