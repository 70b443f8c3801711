import Foundation
import NotifyAPI
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension NotifyClient {
    /// Keeps `GET /v1/me/stream` open (for foreground apps and platforms without push): each change it
    /// carries is applied and emitted exactly like a sync's. Before every (re)connection the client syncs
    /// (sending queued changes, handling an expired cursor) and then resumes the stream after its cursor
    /// (`Last-Event-ID`). A dropped stream reconnects with exponential backoff (1 s doubling to 30 s).
    /// Calling it while the stream runs does nothing. Call `stopLiveUpdates()` to end it.
    public func startLiveUpdates() {
        guard liveTask == nil else { return }
        liveTask = Task { await runLiveUpdates() }
    }

    /// Closes the live stream.
    public func stopLiveUpdates() {
        liveTask?.cancel()
        liveTask = nil
    }

    private func runLiveUpdates() async {
        var backoff = Duration.seconds(1)
        while !Task.isCancelled {
            var connected = false
            do {
                try await sync()
                let connection = try await openStream()
                connected = true
                try await consume(connection)
            } catch {
                // Offline or refused: try again after the backoff.
            }
            backoff = connected ? .seconds(1) : min(backoff * 2, .seconds(30))
            try? await Task.sleep(for: backoff)
        }
    }

    /// Opens the stream after the cursor (refreshing the token once on 401).
    private func openStream() async throws -> LiveConnection {
        var request = transport.request(
            "GET", "/v1/me/stream", headers: ["Last-Event-ID": SyncCursor.encode(state.position), "Accept": "text/event-stream"])
        // The service sends a keep-alive comment every 15 s; silence for longer means the connection is dead.
        request.timeoutInterval = 45
        return try await transport.authorized(request) { request throws(NotifyClientError) in
            try await LiveConnection.open(request)
        } status: { $0.status } body: { $0.errorBody }
    }

    /// Applies and emits each change the stream carries; returns when the service ends it, throws when it fails.
    private func consume(_ connection: LiveConnection) async throws {
        var connection = connection
        var parser = ServerSentEventParser()
        while let data = try await connection.next() {
            for event in parser.feed(data) where event.type == "change" {
                let change = try decode(NotificationChange.self, from: Data(event.data.utf8))
                guard apply(change) else { continue }
                try save()
                broadcaster.emit([change])
            }
        }
    }
}

/// An opened stream request: its status, the body of an error answer, and the rest of the body.
private struct LiveConnection {
    var status: Int
    var errorBody = Data()
    private var parts: AsyncThrowingStream<StreamingRequest.Part, any Error>.AsyncIterator

    static func open(_ request: URLRequest) async throws(NotifyClientError) -> LiveConnection {
        var parts = StreamingRequest.start(request).parts.makeAsyncIterator()
        do {
            guard case .response(let response)? = try await parts.next() else {
                throw NotifyClientError(.invalidResponse, "the live stream ended before its response")
            }
            var connection = LiveConnection(status: response.statusCode, parts: parts)
            if !(200..<300).contains(response.statusCode) {
                while let data = try await connection.next() { connection.errorBody.append(data) }
            }
            return connection
        } catch let error as NotifyClientError {
            throw error
        } catch {
            throw NotifyClientError(.network, "GET /v1/me/stream failed", underlying: error)
        }
    }

    /// The next piece of the body; nil at its end.
    nonisolated(nonsending) mutating func next() async throws -> Data? {
        while let part = try await parts.next(isolation: #isolation) {
            if case .data(let data) = part { return data }
        }
        return nil
    }
}
