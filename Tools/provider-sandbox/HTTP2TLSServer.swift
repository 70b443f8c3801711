import HummingbirdCore
import HummingbirdHTTP2
import Logging
import NIOCore
import NIOSSL

/// A server connection as api.push.apple.com accepts it: TLS offering only ALPN "h2", then HTTP/2.
/// (Hummingbird's `http2Upgrade` also offers HTTP/1.1, which APNs does not.) A client that does
/// not speak HTTP/2 fails the connection preface and is disconnected.
struct HTTP2OnlyTLSChannel: ServerChildChannel {
    typealias Value = HTTP2Channel.Value

    let sslContext: NIOSSLContext
    let http2: HTTP2Channel

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: sslContext))
        }.flatMap {
            http2.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Value, logger: Logger) async {
        await http2.handle(value: value, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// HTTP/2 over TLS with ALPN "h2" only; `tlsConfiguration`'s application protocols are replaced.
    /// On shutdown, streams still open 5 seconds after the client acknowledged GOAWAY are cut.
    static func http2Only(tlsConfiguration: TLSConfiguration) throws -> HTTPServerBuilder {
        var tlsConfiguration = tlsConfiguration
        tlsConfiguration.applicationProtocols = ["h2"]
        let sslContext = try NIOSSLContext(configuration: tlsConfiguration)
        let configuration = HTTP2ChannelConfiguration(gracefulCloseTimeout: .seconds(5))
        return HTTPServerBuilder { responder in
            HTTP2OnlyTLSChannel(
                sslContext: sslContext,
                http2: HTTP2Channel(responder: responder, configuration: configuration)
            )
        }
    }
}
