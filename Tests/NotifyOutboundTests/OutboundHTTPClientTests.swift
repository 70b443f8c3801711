import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import NotifyOutbound
import NotifyTestSupport
import Testing

/// The client that keeps to the policy, against a real HTTP server on the loopback.
@Suite struct OutboundHTTPClientTests {
    struct TableResolver: HostResolving {
        var table: [String: [String]]
        func addresses(of host: String) async -> [IPAddress] { (table[host] ?? []).compactMap { IPAddress($0) } }
    }

    /// Runs `body` with a server answering `/redirect` with 307 to `/target` and anything else with 204.
    private func withServer(_ body: (LoopbackHTTPServer, Int) async throws -> Void) async throws {
        try await LoopbackHTTPServer.with(answering: { request in
            request.uri == "/redirect" ? .init(status: 307, headers: [("location", "/target")]) : .init(status: 204)
        }) { server in
            try await body(server, server.port)
        }
    }

    @Test("a redirect is answered, not followed")
    func redirectNotFollowed() async throws {
        try await withServer { server, port in
            let client = OutboundHTTPClient(policy: OutboundPolicy(allowance: try OutboundAllowance(parsing: "127.0.0.1:\(port)")))
            let response = try await client.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/redirect"), timeout: .seconds(5))
            #expect(response.status == .temporaryRedirect)
            #expect(server.requests.map(\.uri) == ["/redirect"])
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
            #expect(server.requests.isEmpty)
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
            #expect(server.requests.map { $0.header("host") } == ["pinned.test:\(port)"])
            await client.shutdown()
        }
    }
}
