import AsyncHTTPClient
import NIOCore
import NIOSSL
import Synchronization

/// HTTP clients (so their own HTTP/2 connections) for the FCM, WNS and Web Push endpoints, per key the caller
/// chooses, all trusting the extra CA of the provider sandbox when one is configured (APNs has `APNsTransport`).
///
/// A key gets up to `connectionsPerKey` clients, handed out in turn: an HTTP/2 connection carries a limited
/// number of concurrent streams (the sandbox allows 100), and a client waits for a free stream
/// rather than opening another connection, so a busy key spreads its pushes over several connections.
final class HTTPClientPool: Sendable {
    private struct Shard {
        var clients: [HTTPClient] = []
        var next = 0
    }

    private let configuration: HTTPClient.Configuration
    private let connectionsPerKey: Int
    private let shards = Mutex<[String: Shard]>([:])

    init(trustedCAFile: String?, connectionsPerKey: Int = 4) {
        self.connectionsPerKey = max(connectionsPerKey, 1)
        var tls = TLSConfiguration.makeClientConfiguration()
        if let trustedCAFile {
            tls.additionalTrustRoots = [.file(trustedCAFile)]
        }
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.httpVersion = .automatic
        configuration.timeout = .init(connect: .seconds(5), read: .seconds(30))
        self.configuration = configuration
    }

    /// The next client for `key` (made on first use, up to `connectionsPerKey` of them).
    func client(for key: String) -> HTTPClient {
        shards.withLock { shards in
            var shard = shards[key, default: Shard()]
            defer { shards[key] = shard }
            if shard.clients.count < connectionsPerKey && shard.next >= shard.clients.count {
                shard.clients.append(HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration))
            }
            let client = shard.clients[shard.next % shard.clients.count]
            shard.next = (shard.next + 1) % connectionsPerKey
            return client
        }
    }

    func shutdown() async {
        let all = shards.withLock { shards in
            defer { shards = [:] }
            return shards.values.flatMap(\.clients)
        }
        for client in all { try? await client.shutdown() }
    }
}
