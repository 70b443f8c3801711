import AsyncHTTPClient
import Foundation
import NIOCore
import NotifyOutbound
import ServiceLifecycle

/// How ingest reads identity providers' documents (OpenID Connect discovery documents and key sets): every such
/// request goes through one of these, so that a policy on outbound addresses can stand in front of all of them.
protocol IdentityDocumentFetching: Sendable {
    /// The body of a 200 answer to `GET url`; any other answer (a redirect included), a body over the size limit, or
    /// no answer in time throws.
    func fetch(_ url: URL) async throws -> [UInt8]
}

/// Why an identity provider's document could not be read; it names the URL (never a token or a key).
struct IdentityDocumentFetchError: Error, CustomStringConvertible {
    var description: String
}

/// The default fetcher: a client of its own that keeps to the outbound address policy and follows no redirect (a
/// provider's documents are where it says they are), with short timeouts and a bounded body. It closes its
/// connections when the service shuts down.
struct HTTPIdentityDocumentFetcher: IdentityDocumentFetching, Service {
    /// The most one document may hold: key sets are a few kilobytes.
    static let maximumBytes = 256 * 1024
    private static let deadline = TimeAmount.seconds(5)

    private let client: OutboundHTTPClient

    init(policy: OutboundPolicy) {
        client = OutboundHTTPClient(policy: policy, connectTimeout: .seconds(2), readTimeout: .seconds(5))
    }

    func fetch(_ url: URL) async throws -> [UInt8] {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.headers.add(name: "Accept", value: "application/json")
        let response = try await client.execute(request, timeout: Self.deadline)
        guard response.status == .ok else {
            throw IdentityDocumentFetchError(description: "GET \(url.absoluteString) answered \(response.status.code)")
        }
        do {
            return Array(buffer: try await response.body.collect(upTo: Self.maximumBytes))
        } catch is NIOTooManyBytesError {
            throw IdentityDocumentFetchError(description: "GET \(url.absoluteString) answered more than \(Self.maximumBytes) bytes")
        }
    }

    func run() async throws {
        try? await gracefulShutdown()
        await client.shutdown()
    }
}
