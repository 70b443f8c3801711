import NIOCore
import NIOPosix
import NotifyAPNsCore
import NotifyOutbound
import Synchronization

/// push-dispatch's HTTP/2 connections to APNs, built directly on swift-nio-http2 and NIOSSL.
///
/// APNs ties a connection to the provider token it first saw: changing the token on a connection more often than
/// every 20 minutes gets 429 TooManyProviderTokenUpdates. So each signing key and endpoint has a pool of its own
/// (up to `connectionsPerKey` connections, all on one event loop), and `reset` replaces a key's pool after a
/// provider-token refresh so the new token starts on new connections.
public final class APNsTransport: Sendable {
    private struct Key: Hashable {
        var teamId: String
        var keyId: String
        var baseURL: String
    }

    private struct Pools {
        var byKey: [Key: APNsConnectionPool] = [:]
        var isShutDown = false
    }

    private let factory: APNsConnectionFactory
    private let connectionsPerKey: Int
    private let eventLoopGroup: any EventLoopGroup
    private let pools = Mutex(Pools())

    /// Throws when the trusted CA file cannot be read. Every connection's host is checked by `policy` (an app's endpoint
    /// override is a URL like any other).
    public init(
        trustedCAFile: String?, policy: OutboundPolicy = OutboundPolicy(), connectionsPerKey: Int = 4,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) throws {
        factory = try APNsConnectionFactory(trustedCAFile: trustedCAFile, policy: policy)
        self.connectionsPerKey = connectionsPerKey
        self.eventLoopGroup = eventLoopGroup
    }

    /// The connections of this signing key and endpoint, made on first use.
    func pool(teamId: String, keyId: String, baseURL: String) throws(APNsTransportError) -> APNsConnectionPool {
        let key = Key(teamId: teamId, keyId: keyId, baseURL: baseURL)
        return try pools.withLock { pools throws(APNsTransportError) in
            guard !pools.isShutDown else { throw .poolClosed }
            if let pool = pools.byKey[key] { return pool }
            let pool = APNsConnectionPool(
                endpoint: try APNsTransportEndpoint(baseURL: baseURL), factory: factory,
                maximumConnections: connectionsPerKey, eventLoop: eventLoopGroup.next())
            pools.byKey[key] = pool
            return pool
        }
    }

    /// Replaces the connections of this key (after a provider-token refresh): the next requests open new ones,
    /// the old ones finish their streams and close.
    public func reset(teamId: String, keyId: String, baseURL: String) {
        let old = pools.withLock { $0.byKey.removeValue(forKey: Key(teamId: teamId, keyId: keyId, baseURL: baseURL)) }
        _ = old?.close()
    }

    /// Takes no more requests and closes every connection once its open streams are answered.
    public func shutdown() async {
        let all = pools.withLock { pools in
            pools.isShutDown = true
            defer { pools.byKey = [:] }
            return Array(pools.byKey.values)
        }
        let closed = all.map { $0.close() }
        for pool in closed {
            try? await pool.get()
        }
    }
}
