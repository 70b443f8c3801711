import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends one request to the service and answers the whole response, as `URLSession.data(for:)` does; throws when no
/// answer came (offline, refused, timed out). `URLSessionTransport` is the default; pass another to `NotifyClient`
/// (a fake service in an app's tests, a session configured otherwise). The client adds the user token and reads the
/// answers; the live stream (`startLiveUpdates()`) keeps a connection of its own.
public protocol NotifyTransport: Sendable {
    func data(for request: URLRequest) async throws -> (Data, URLResponse)
}

/// Requests on an ephemeral `URLSession` of its own, each allowed 30 s.
public final class URLSessionTransport: NotifyTransport {
    private let session: URLSession

    public init() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 30
        session = URLSession(configuration: configuration)
    }

    deinit { session.invalidateAndCancel() }

    public func data(for request: URLRequest) async throws -> (Data, URLResponse) {
        try await session.data(for: request)
    }
}
