import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP2
import NIOSSL

/// A connection of the APNs listener as api.push.apple.com accepts it: TLS offering only ALPN "h2", then HTTP/2,
/// served frame by frame by `APNsServerConnection`. HummingbirdCore's `Server` allows remote half-closure, so a
/// client's FIN or close_notify reaches `APNsServerConnection`, which closes its side. (Hummingbird's `http2Upgrade` also offers HTTP/1.1, which APNs
/// does not.) A client that does not speak HTTP/2 fails the connection preface and is disconnected. Run by
/// HummingbirdCore's `Server`: one task per connection, none per request.
struct APNsServerChannel: ServerChildChannel {
    struct Value: ServerChildChannelValue {
        let channel: any Channel
    }

    private let sslContext: NIOSSLContext
    private let endpoint: APNsEndpoint
    private let registry: APNsConnectionRegistry

    /// `tlsConfiguration`'s application protocols are replaced by "h2".
    init(tlsConfiguration: TLSConfiguration, endpoint: APNsEndpoint, registry: APNsConnectionRegistry) throws {
        var tlsConfiguration = tlsConfiguration
        tlsConfiguration.applicationProtocols = ["h2"]
        sslContext = try NIOSSLContext(configuration: tlsConfiguration)
        self.endpoint = endpoint
        self.registry = registry
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandlers([
                NIOSSLServerHandler(context: sslContext),
                NIOHTTP2Handler(mode: .server),
                APNsServerConnection(endpoint: endpoint, registry: registry),
            ])
            return Value(channel: channel)
        }
    }

    /// Waits until the connection is closed: its requests are answered on its event loop.
    func handle(value: Value, logger: Logger) async {
        try? await value.channel.closeFuture.get()
    }
}
