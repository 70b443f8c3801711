import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL
import NotifyAPNsCore
import NotifyOutbound

/// Opens APNs connections: TCP, TLS 1.2 or later offering only ALPN "h2" (trusting the extra CA of the provider
/// sandbox when one is configured), then HTTP/2 with an `APNsConnection` on top of `NIOHTTP2Handler`. The endpoint's
/// host is checked by the outbound policy at every connection, and the connection goes to the address that was checked
/// (an app may name its own APNs endpoint).
struct APNsConnectionFactory: Sendable {
    /// How long a connection may take to be ready: TCP connect, TLS handshake and the server's first SETTINGS.
    let connectTimeout: TimeAmount = .seconds(5)
    private let tlsContext: NIOSSLContext
    private let policy: OutboundPolicy

    private static let http2Configuration = {
        var configuration = NIOHTTP2Handler.ConnectionConfiguration()
        // A client that never accepts server push.
        configuration.initialSettings = [
            HTTP2Setting(parameter: .enablePush, value: 0),
            HTTP2Setting(parameter: .maxHeaderListSize, value: 64 * 1024),
        ]
        // A late answer on a stream reset after its timeout is ignored only while the stream is remembered as reset
        // (otherwise it is a connection error): remember more than can be open at once, for a burst of timeouts.
        configuration.maximumRecentlyResetStreams = 4 * APNsConnection.maximumConcurrentStreams
        // The request headers are ours, made of values checked when they were stored (hex device tokens, derived
        // ids); NIOHTTP2 would check every byte of every field again. APNs checks them anyway: a bad field is a reset
        // stream either way, answered unreachable.
        configuration.headerBlockValidation = .disabled
        return configuration
    }()

    /// Throws when the trusted CA file cannot be read.
    init(trustedCAFile: String?, policy: OutboundPolicy) throws {
        self.policy = policy
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        tls.applicationProtocols = ["h2"]
        if let trustedCAFile {
            tls.additionalTrustRoots = [.file(trustedCAFile)]
        }
        tlsContext = try NIOSSLContext(configuration: tls)
    }

    /// Connects `connection` to `endpoint` on `eventLoop` (the caller's loop). A failure here is one before the channel
    /// was active; later failures reach `connection` through its channel.
    func connect(_ connection: APNsConnection, to endpoint: APNsTransportEndpoint, on eventLoop: any EventLoop) -> EventLoopFuture<any Channel> {
        let handler = NIOLoopBound(connection, eventLoop: eventLoop)
        let tlsContext = tlsContext
        let http2 = Self.http2Configuration
        let connectTimeout = connectTimeout
        let policy = policy
        return eventLoop.makeFutureWithTask {
            try await policy.destination(host: endpoint.host.lowercased(), port: endpoint.port)
        }.flatMapThrowing { destination in
            try SocketAddress(ipAddress: destination.address.description, port: destination.port)
        }.flatMap { address in
            ClientBootstrap(group: eventLoop)
                .connectTimeout(connectTimeout)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandlers([
                            try NIOSSLClientHandler(context: tlsContext, serverHostname: endpoint.serverName),
                            APNsConnectionWriteCoalescer(),
                            NIOHTTP2Handler(mode: .client, connectionConfiguration: http2),
                            handler.value,
                        ])
                    }
                }
                .connect(to: address)
        }
    }
}
