import AsyncHTTPClient
import NIOCore
import NIOSSL
import Synchronization

/// HTTP clients (so their own HTTP/2 connections) for the provider endpoints, one per key the caller chooses,
/// all trusting the extra CA of the provider sandbox when one is configured.
final class HTTPClientPool: Sendable {
    private let configuration: HTTPClient.Configuration
    private let clients = Mutex<[String: HTTPClient]>([:])

    init(trustedCAFile: String?) {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let trustedCAFile {
            tls.additionalTrustRoots = [.file(trustedCAFile)]
        }
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.httpVersion = .automatic
        configuration.timeout = .init(connect: .seconds(5), read: .seconds(30))
        self.configuration = configuration
    }

    /// The client for `key`, made on first use.
    func client(for key: String) -> HTTPClient {
        clients.withLock { clients in
            if let client = clients[key] { return client }
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            clients[key] = client
            return client
        }
    }

    /// Replaces the client of `key`: the next request opens new connections.
    func reset(key: String) {
        let old = clients.withLock { $0.removeValue(forKey: key) }
        if let old { Task { try? await old.shutdown() } }
    }

    func shutdown() async {
        let all = clients.withLock { clients in
            defer { clients = [:] }
            return Array(clients.values)
        }
        for client in all { try? await client.shutdown() }
    }
}
