import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NotifyModels
import NotifyStore
import ServiceLifecycle

/// `GET /v1/me/stream`: Server-Sent Events, one event per change of the user's notifications
/// (`id:` the sequence, `data:` the change as the changes endpoint gives it). Resumes after
/// `Last-Event-ID` (or `?cursor=`) without gaps: it first sends what the database holds after that
/// point, then whatever each wake-up from the broker finds.
struct StreamRoutes: Sendable {
    let authenticator: Authenticator
    let reader: any NotificationStore
    let hub: LiveHub
    let logger: Logger
    var keepAlive: Duration = .seconds(15)

    static let lastEventID = HTTPField.Name("Last-Event-ID")!

    func register(on router: Router<BasicRequestContext>) {
        router.get("/v1/me/stream") { request, _ in try await stream(request) }
    }

    private func stream(_ request: Request) async throws -> Response {
        let user = try await authenticator.requireUser(request)
        let start: SyncPosition
        do {
            if let lastEventID = request.headers[Self.lastEventID] {
                // An event id is the cursor after that event (a bare sequence from streams before broadcasts were in feeds).
                if let sequence = Int64(lastEventID), sequence >= 0 {
                    start = SyncPosition(sequence: sequence)
                } else {
                    do {
                        start = try SyncCursor.decode(lastEventID)
                    } catch {
                        throw ValidationError.invalid("Last-Event-ID", "Last-Event-ID must be an event id this stream sent")
                    }
                }
            } else {
                start = try SyncCursor.decode(request.uri.queryParameters.get("cursor").map { String($0) })
            }
        } catch let error as ValidationError {
            throw APIFailure(error)
        }
        try await APIFailure.reading { try await reader.ensureRetained(appId: user.appId, userId: user.userId, after: start.sequence) }
        guard let (listener, wakeUps) = hub.subscribe(appId: user.appId, userId: user.userId) else {
            throw APIFailure(
                .tooManyRequests, code: "too_many_streams",
                message: "this user holds \(hub.maximumStreamsPerUser) live streams on this instance already (NOTIFY_MAX_STREAMS_PER_USER); close one first",
                retryAfterSeconds: 5)
        }
        // Before the first read: a change committed after it is then routed to this instance.
        do {
            try await hub.bindForStreams()
        } catch {
            hub.unsubscribe(listener)
            logger.warning("a live stream was refused: the live queue cannot be bound", metadata: ["error": "\(error)"])
            throw APIFailure(
                .serviceUnavailable, code: "broker_unavailable",
                message: "the live stream cannot be set up: the broker did not bind this instance's live queue", retryAfterSeconds: 5)
        }
        let hub = self.hub
        let logger = self.logger
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
            body: ResponseBody { writer in
                defer { hub.unsubscribe(listener) }
                try await writer.write(ByteBuffer(string: ": connected\n\n"))
                do {
                    // The stream ends when the client closes its connection (the writing is cancelled then, instead of
                    // failing at the next keep-alive), and when the server begins to shut down, so that it can drain.
                    try await request.body.consumeWithCancellationOnInboundClose { _ in
                        try await withGracefulShutdownHandler {
                            try await sendChanges(of: user, after: start, wakeUps: wakeUps, to: &writer)
                        } onGracefulShutdown: {
                            hub.unsubscribe(listener)
                        }
                    }
                } catch is CancellationError {
                    logger.debug("live stream closed by the client", metadata: ["appId": "\(user.appId)", "userId": "\(user.userId)"])
                    return
                }
                logger.debug("live stream closed", metadata: ["appId": "\(user.appId)", "userId": "\(user.userId)"])
                try await writer.finish(nil)
            })
    }

    /// Writes the user's changes after `start` as events, then those each wake-up finds, with a keep-alive comment
    /// between; returns when the wake-ups end (the stream was unsubscribed).
    private func sendChanges(
        of user: Authenticator.User, after start: SyncPosition, wakeUps: AsyncStream<Void>, to writer: inout some ResponseBodyWriter
    ) async throws {
        var last = start
        let encoder = WireCoding.makeEncoder()
        try await withThrowingTaskGroup(of: Void.self) { group in
            // A comment line now and then keeps proxies from closing an idle stream.
            let (ticks, tick) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
            group.addTask { [keepAlive] in
                while !Task.isCancelled {
                    try await Task.sleep(for: keepAlive)
                    tick.yield()
                }
            }
            var pending = true
            var events = merge(wakeUps, ticks).makeAsyncIterator()
            while !Task.isCancelled {
                if pending {
                    var more = true
                    while more {
                        let page = try await reader.changes(appId: user.appId, userId: user.userId, after: last, limit: 500, filter: .init())
                        for change in page.changes {
                            if let broadcastSequence = change.broadcastSequence {
                                last.broadcastSequence = broadcastSequence
                            } else {
                                last.sequence = change.sequence
                            }
                            var text = "id: \(SyncCursor.encode(last))\nevent: change\ndata: "
                            text += String(decoding: try encoder.encode(change), as: UTF8.self)
                            text += "\n\n"
                            try await writer.write(ByteBuffer(string: text))
                        }
                        last = try SyncCursor.decode(page.cursor)
                        more = page.hasMore
                    }
                }
                guard let event = await events.next() else { break }
                pending = event
                if !event { try await writer.write(ByteBuffer(string: ": keep-alive\n\n")) }
            }
            group.cancelAll()
        }
    }
}

/// Wake-ups (true) and keep-alive ticks (false) as one sequence; ends when the wake-ups end.
private func merge(_ wakeUps: AsyncStream<Void>, _ ticks: AsyncStream<Void>) -> AsyncStream<Bool> {
    AsyncStream { continuation in
        let wakeTask = Task {
            for await _ in wakeUps { continuation.yield(true) }
            continuation.finish()
        }
        let tickTask = Task {
            for await _ in ticks { continuation.yield(false) }
        }
        continuation.onTermination = { _ in
            wakeTask.cancel()
            tickTask.cancel()
        }
    }
}
