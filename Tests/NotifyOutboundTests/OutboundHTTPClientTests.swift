import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import NIOPosix
import NotifyOutbound
import Synchronization
import Testing

/// The client that keeps to the policy, against a real HTTP server on the loopback.
@Suite struct OutboundHTTPClientTests {
    /// Answers `/redirect` with 307 to `/target`, anything else 204; counts the requests per path and keeps their Host.
    final class RecordingServer: Sendable {
        let hits = Mutex<[String: Int]>([:])
        let hosts = Mutex<[String]>([])

        final class Handler: ChannelInboundHandler {
            typealias InboundIn = HTTPServerRequestPart
            typealias OutboundOut = HTTPServerResponsePart
            let server: RecordingServer

            init(server: RecordingServer) { self.server = server }

            func channelRead(context: ChannelHandlerContext, data: NIOAny) {
                guard case .head(let head) = unwrapInboundIn(data) else { return }
                server.hits.withLock { $0[head.uri, default: 0] += 1 }
                server.hosts.withLock { $0.append(head.headers.first(name: "host") ?? "") }
                var headers = HTTPHeaders([("content-length", "0")])
                let status: HTTPResponseStatus
                if head.uri == "/redirect" {
                    status = .temporaryRedirect
                    headers.add(name: "location", value: "/target")
                } else {
                    status = .noContent
                }
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            }
        }

        func start() async throws -> any Channel {
            try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                        try channel.pipeline.syncOperations.addHandler(Handler(server: self))
                    }
                }
                .bind(host: "127.0.0.1", port: 0).get()
        }
    }

    struct TableResolver: HostResolving {
        var table: [String: [String]]
        func addresses(of host: String) async -> [IPAddress] { (table[host] ?? []).compactMap { IPAddress($0) } }
    }

    private func withServer(_ body: (RecordingServer, Int) async throws -> Void) async throws {
        let server = RecordingServer()
        let channel = try await server.start()
        let port = try #require(channel.localAddress?.port)
        do {
            try await body(server, port)
        } catch {
            try await channel.close()
            throw error
        }
        try await channel.close()
    }

    @Test("a redirect is answered, not followed")
    func redirectNotFollowed() async throws {
        try await withServer { server, port in
            let client = OutboundHTTPClient(policy: OutboundPolicy(allowance: try OutboundAllowance(parsing: "127.0.0.1:\(port)")))
            let response = try await client.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/redirect"), timeout: .seconds(5))
            #expect(response.status == .temporaryRedirect)
            #expect(server.hits.withLock { $0 } == ["/redirect": 1])
            await client.shutdown()
        }
    }

    @Test("a refused URL throws before anything is sent")
    func refusedBeforeSending() async throws {
        try await withServer { server, port in
            let client = OutboundHTTPClient(policy: OutboundPolicy(resolver: TableResolver(table: ["rebind.test": ["127.0.0.1"]])))
            for url in ["http://127.0.0.1:\(port)/x", "http://rebind.test:\(port)/x", "http://[::ffff:127.0.0.1]:\(port)/x"] {
                await #expect(throws: OutboundRefusal.self, "\(url)") {
                    try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(5))
                }
            }
            #expect(server.hits.withLock { $0 }.isEmpty)
            await client.shutdown()
        }
    }

    @Test("a name connects to the address that was checked, and the request still names the host")
    func connectsToTheCheckedAddress() async throws {
        try await withServer { server, port in
            // No system resolver knows this name: the request can only have reached the server through the checked address.
            let policy = OutboundPolicy(
                allowance: try OutboundAllowance(parsing: "pinned.test:\(port)"), resolver: TableResolver(table: ["pinned.test": ["127.0.0.1"]]))
            let client = OutboundHTTPClient(policy: policy)
            let response = try await client.execute(HTTPClientRequest(url: "http://pinned.test:\(port)/target"), timeout: .seconds(5))
            #expect(response.status == .noContent)
            #expect(server.hosts.withLock { $0 } == ["pinned.test:\(port)"])
            await client.shutdown()
        }
    }
}
