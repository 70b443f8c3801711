import AsyncHTTPClient
import NIOCore
import NIOSSL
import Synchronization

/// One HTTP/2 client (so its own connections) per APNs signing key and endpoint.
///
/// APNs ties a connection to the provider token it first saw: changing the token on a connection
/// more often than every 20 minutes gets 429 TooManyProviderTokenUpdates. Apps with different keys
/// therefore never share a connection.
final class APNsConnectionPool: Sendable {
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

    /// The client for pushes signed with this team's key to this endpoint.
    func client(teamId: String, keyId: String, baseURL: String) -> HTTPClient {
        let key = "\(teamId).\(keyId)@\(baseURL)"
        return clients.withLock { clients in
            if let client = clients[key] { return client }
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            clients[key] = client
            return client
        }
    }

    /// Replaces the client of this key (after a provider-token refresh, so the new token starts on a new connection).
    func reset(teamId: String, keyId: String, baseURL: String) {
        let old = clients.withLock { $0.removeValue(forKey: "\(teamId).\(keyId)@\(baseURL)") }
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
