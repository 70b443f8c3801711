import NotifyAMQP
import Testing

/// `AMQPConfiguration(url:)` parsing; no broker needed.
@Suite("AMQPConfiguration(url:)")
struct AMQPConfigurationTests {
    @Test("a full URL: credentials, host, port and vhost")
    func fullURL() throws {
        let configuration = try AMQPConfiguration(url: "amqp://notify:secret@broker.example:21672/notify")
        #expect(configuration.endpoints[0].host == "broker.example")
        #expect(configuration.endpoints[0].port == 21672)
        #expect(configuration.user == "notify")
        #expect(configuration.password == "secret")
        #expect(configuration.virtualHost == "notify")
    }

    @Test("the vhost path is percent-decoded", arguments: [
        ("amqp://h/%2f", "/"),
        ("amqp://h/%2F", "/"),
        ("amqp://h/notify", "notify"),
        ("amqp://h/%2Fnotify", "/notify"),
        ("amqp://h/my%20vhost", "my vhost"),
        ("amqp://h", "/"),
        ("amqp://h:5673", "/"),
        ("amqp://h/", ""),
    ])
    func virtualHost(url: String, expected: String) throws {
        #expect(try AMQPConfiguration(url: url).virtualHost == expected)
    }

    @Test("without a port the AMQP default 5672 is used; without credentials guest/guest")
    func defaults() throws {
        let configuration = try AMQPConfiguration(url: "amqp://127.0.0.1/notify")
        #expect(configuration.endpoints[0].port == 5672)
        #expect(configuration.endpoints[0].host == "127.0.0.1")
        #expect(configuration.user == "guest")
        #expect(configuration.password == "guest")
    }

    @Test("percent-encoded credentials are decoded")
    func encodedCredentials() throws {
        let configuration = try AMQPConfiguration(url: "amqp://us%40er:p%3As%2Fs%40@h:1234/v")
        #expect(configuration.user == "us@er")
        #expect(configuration.password == "p:s/s@")
        #expect(configuration.endpoints[0].port == 1234)
        #expect(configuration.virtualHost == "v")
    }

    @Test("a user without a password keeps the default password")
    func userOnly() throws {
        let configuration = try AMQPConfiguration(url: "amqp://notify@h/notify")
        #expect(configuration.user == "notify")
        #expect(configuration.password == "guest")
    }

    @Test("anything but an amqp:// URL with a host is refused", arguments: [
        "http://notify:notify@127.0.0.1:21672/notify",
        "amqps://notify:notify@127.0.0.1/notify",
        "127.0.0.1:5672",
        "amqp:///notify",
        "not a url",
        "",
    ])
    func refused(url: String) {
        let error = #expect(throws: AMQPError.self) { try AMQPConfiguration(url: url) }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.description.contains("notify:notify") == false, "the error must not echo credentials")
    }

    @Test("several URLs separated by commas are a cluster's nodes, in order")
    func nodeList() throws {
        let configuration = try AMQPConfiguration(
            url: "amqp://notify:secret@127.0.0.1:22672/notify, amqp://notify:secret@127.0.0.1:22652/notify,amqp://notify:secret@node3/notify")
        #expect(configuration.endpoints == [.init(host: "127.0.0.1", port: 22672), .init(host: "127.0.0.1", port: 22652), .init(host: "node3")])
        #expect(configuration.user == "notify")
        #expect(configuration.virtualHost == "notify")
    }

    @Test("a node list whose URLs disagree on user, password or vhost is refused, without echoing them", arguments: [
        "amqp://notify:secret@a/notify,amqp://other:secret@b/notify",
        "amqp://notify:secret@a/notify,amqp://notify:other@b/notify",
        "amqp://notify:secret@a/notify,amqp://notify:secret@b/other",
        "amqp://notify:secret@a/notify,",
        "amqp://notify:secret@a/notify,b:5672",
    ])
    func nodeListRefused(url: String) {
        let error = #expect(throws: AMQPError.self) { try AMQPConfiguration(url: url) }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.description.contains("secret") == false, "the error must not echo credentials")
    }

    @Test("the default test URL points at the local node")
    func testURL() throws {
        let configuration = try AMQPConfiguration(url: "amqp://notify:notify@127.0.0.1:21672/notify")
        #expect(configuration.endpoints[0].host == "127.0.0.1")
        #expect(configuration.endpoints[0].port == 21672)
        #expect(configuration.virtualHost == "notify")
    }
}
