import AsyncHTTPClient
import Foundation
import NIOCore
import NotifyModels
import NotifyTestSupport
import Testing

/// An open `GET /v1/me/stream` (Server-Sent Events), read by a task into a log the test polls.
final class LiveStream: Sendable {
    struct Event: Sendable {
        var id: String?
        var event: String?
        var data: String
    }

    private actor Log {
        var events: [Event] = []
        var comments: [String] = []
        var end: String?

        func add(_ block: Substring) {
            var event = Event(id: nil, event: nil, data: "")
            var isEvent = false
            for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
                if line.hasPrefix(":") {
                    comments.append(line.dropFirst().trimmingCharacters(in: .whitespaces))
                    continue
                }
                let parts = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
                guard let name = parts.first, !name.isEmpty else { continue }
                var value = parts.count > 1 ? String(parts[1]) : ""
                if value.hasPrefix(" ") { value.removeFirst() }
                isEvent = true
                switch name {
                case "id": event.id = value
                case "event": event.event = value
                case "data": event.data += event.data.isEmpty ? value : "\n" + value
                default: break
                }
            }
            if isEvent { events.append(event) }
        }

        func finish(_ reason: String) {
            if end == nil { end = reason }
        }
    }

    private let log: Log
    private let reader: Task<Void, Never>

    private init(body: HTTPClientResponse.Body) {
        let log = Log()
        self.log = log
        reader = Task {
            var buffer = ""
            do {
                for try await chunk in body {
                    buffer += String(buffer: chunk).replacingOccurrences(of: "\r\n", with: "\n")
                    while let range = buffer.range(of: "\n\n") {
                        await log.add(buffer[..<range.lowerBound])
                        buffer.removeSubrange(..<range.upperBound)
                    }
                }
                await log.finish("the server ended the stream")
            } catch {
                await log.finish("the stream failed: \(error)")
            }
        }
    }

    /// Opens the stream with a user token (and `Last-Event-ID`, if given); throws unless it answers 200 text/event-stream.
    static func open(
        token: String, lastEventID: String? = nil, timeout: TimeAmount = .seconds(90), ingestURL: String = Stack.ingestURL
    ) async throws -> LiveStream {
        var request = HTTPClientRequest(url: "\(ingestURL)/v1/me/stream")
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "Accept", value: "text/event-stream")
        if let lastEventID { request.headers.add(name: "Last-Event-ID", value: lastEventID) }
        let response = try await HTTPClient.shared.execute(request, timeout: timeout)
        guard response.status == .ok else {
            let body = try await response.body.collect(upTo: 1 << 20)
            throw TestFailure("GET /v1/me/stream answered \(response.status.code): \(String(buffer: body))")
        }
        let contentType = response.headers.first(name: "Content-Type") ?? ""
        guard contentType.hasPrefix("text/event-stream") else {
            throw TestFailure("GET /v1/me/stream answered Content-Type \(contentType)")
        }
        return LiveStream(body: response.body)
    }

    /// Waits until `count` events arrived or the timeout passed; returns the events so far.
    func waitForEvents(_ count: Int, timeout: Duration = .seconds(15)) async throws -> [Event] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let events = await log.events
            let ended = await log.end != nil
            if events.count >= count || ContinuousClock.now >= deadline || ended { return events }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Waits until the server's `: connected` comment arrived.
    func waitUntilConnected(timeout: Duration = .seconds(10)) async throws {
        let deadline = ContinuousClock.now + timeout
        while !(await log.comments.contains("connected")) {
            if let end = await log.end { throw TestFailure("the stream ended before it said connected: \(end)") }
            guard ContinuousClock.now < deadline else { throw TestFailure("the stream did not say connected within \(timeout)") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Why the stream ended, or that it is open.
    var state: String {
        get async { await log.end ?? "the stream is open" }
    }

    /// Closes the connection.
    func close() async {
        reader.cancel()
        await reader.value
    }
}

extension LiveStream.Event {
    func change() throws -> NotificationChange {
        do {
            return try WireCoding.makeDecoder().decode(NotificationChange.self, from: Data(data.utf8))
        } catch {
            throw TestFailure("event \(id ?? "without id") is not a change: \(error); data: \(data)")
        }
    }
}

extension EndToEndTests {
    @Suite("the live stream")
    struct LiveStreamTests {
        @Test("a connected client gets each change as it happens; reconnecting with Last-Event-ID replays without gaps")
        func streamDeliversAndResumes() async throws {
            let app = try await TestApp.create()
            let userId = "user-\(uniqueSuffix())"
            let user = try await app.user(userId)
            let other = try await app.user("other-\(uniqueSuffix())")

            let stream = try await LiveStream.open(token: user.token)
            do {
                try await stream.waitUntilConnected()
                let id = try await app.publishAccepted(.alert(to: userId, title: "live"))
                _ = try await app.publishAccepted(.alert(to: other.userId, title: "someone else's"))
                var events = try await stream.waitForEvents(1)
                var state = await stream.state
                try #require(events.count == 1, "no event for the publish within 15 s (\(state))")
                #expect(userSequence(events[0].id) == 1)
                #expect(events[0].event == "change")
                let created = try events[0].change()
                #expect(created.sequence == 1)
                #expect(created.kind == .created)
                #expect(created.notification.id.uuidString.lowercased() == id)
                #expect(created.notification.payload?.visualContent?.title == "live")

                try await user.patchAccepted(id, StateChangeRequest(readState: .read))
                events = try await stream.waitForEvents(2)
                state = await stream.state
                try #require(events.count == 2, "no event for the state change within 15 s (\(state))")
                #expect(userSequence(events[1].id) == 2)
                let changed = try events[1].change()
                #expect(changed.sequence == 2)
                #expect(changed.kind == .stateChanged)
                #expect(changed.notification.readState == .read)

                try await Task.sleep(for: .milliseconds(500))
                events = try await stream.waitForEvents(3, timeout: .zero)
                #expect(events.map { userSequence($0.id) } == [1, 2], "the stream carried more than the user's two changes")
            } catch {
                await stream.close()
                throw error
            }
            await stream.close()

            // While disconnected: one more change (sequence 3).
            let second = try await app.publishAccepted(.alert(to: userId, title: "while away"))
            _ = try await user.waitForChanges(after: SyncCursor.encode(SyncPosition(sequence: 2))) { !$0.isEmpty }

            let resumed = try await LiveStream.open(token: user.token, lastEventID: "1")
            do {
                var events = try await resumed.waitForEvents(2)
                var state = await resumed.state
                #expect(events.map { userSequence($0.id) } == [2, 3], "replay after Last-Event-ID 1 (\(state))")
                if events.count == 2 {
                    #expect(try events[1].change().notification.id.uuidString.lowercased() == second)
                }
                // And live again after the replay.
                try await user.patchAccepted(second, StateChangeRequest(userActionState: .dismissed))
                events = try await resumed.waitForEvents(3)
                state = await resumed.state
                #expect(events.map { userSequence($0.id) } == [2, 3, 4], "a live change after the replay (\(state))")
                if events.count == 3 {
                    let change = try events[2].change()
                    #expect(change.kind == .stateChanged && change.notification.userActionState == .dismissed)
                }
            } catch {
                await resumed.close()
                throw error
            }
            await resumed.close()
        }

        @Test("an instance without live streams is not sent change batches: its queue is unbound when idle, bound before a stream's first read")
        func liveQueueIsBoundOnlyWhileStreaming() async throws {
            // test.sh runs ingest with NOTIFY_LIVE_UNBIND_SECONDS=2; a closed stream is noticed when its connection closes.
            // The live queues bound to the change events' exchange (fanout.changes always is).
            func liveQueuesBound() async throws -> [String] {
                try await Broker.queuesBound(to: QueueNames.changesExchange).filter { $0 != QueueNames.fanoutChanges }
            }
            func waitForBindings(_ done: @escaping ([String]) -> Bool) async throws -> [String] {
                let deadline = ContinuousClock.now + .seconds(60)
                var bound = try await liveQueuesBound()
                while !done(bound) && ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(250))
                    bound = try await liveQueuesBound()
                }
                return bound
            }
            let idle = try await waitForBindings { $0.isEmpty }
            #expect(idle.isEmpty, "no stream open, yet bound: \(idle)")

            let app = try await TestApp.create()
            let userId = "user-\(uniqueSuffix())"
            let user = try await app.user(userId)
            let stream = try await LiveStream.open(token: user.token)
            do {
                try await stream.waitUntilConnected()
                #expect(try await liveQueuesBound().count == 1, "bound before the stream's first read")
                let id = try await app.publishAccepted(.alert(to: userId, title: "after the queue was bound again"))
                let events = try await stream.waitForEvents(1)
                #expect(try events.first?.change().notification.id.uuidString.lowercased() == id, "the change reached the stream")
            } catch {
                await stream.close()
                throw error
            }
            await stream.close()
            let after = try await waitForBindings { $0.isEmpty }
            #expect(after.isEmpty, "the stream closed, yet bound: \(after)")
        }

        @Test("the stream needs a valid user token and a Last-Event-ID it sent")
        func streamRejectsBadRequests() async throws {
            let app = try await TestApp.create()
            let token = try await app.userToken("user-\(uniqueSuffix())")
            let anonymous = try await StackClient.send(.GET, "\(Stack.ingestURL)/v1/me/stream")
            expectAPIError(anonymous, status: 401, field: "Authorization", "the stream without a token")
            let badID = try await StackClient.send(.GET, "\(Stack.ingestURL)/v1/me/stream", bearer: token, headers: ["Last-Event-ID": "nope"])
            expectAPIError(badID, status: 400, field: "Last-Event-ID", "the stream with Last-Event-ID: nope")
        }
    }
}

/// The user's sequence in an event id (the cursor after that event).
private func userSequence(_ id: String?) -> Int64? {
    (try? SyncCursor.decode(id)).map(\.sequence)
}
