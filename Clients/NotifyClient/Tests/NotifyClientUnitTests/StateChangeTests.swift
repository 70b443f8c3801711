import Foundation
import NotifyAPI
import Synchronization
import Testing

@testable import NotifyClient

/// Marking notifications read or dismissed and deleting them: at once in the cache, queued while the service cannot
/// be reached, sent once each and in order.
@Suite struct StateChangeTests {
    let notification = Fixture.notification(sequence: 1)

    /// A service that lists `notification` and answers state changes with `answer`.
    func service(answering answer: @escaping @Sendable (FakeService.Request) throws -> FakeService.Answer) -> FakeService {
        let notification = notification
        return FakeService { request in
            request.path == "/v1/me/notifications/changes" ? try .ok(Fixture.page([Fixture.change(.created, notification)], through: 1)) : try answer(request)
        }
    }

    var path: String { "/v1/me/notifications/\(notification.id.uuidString.lowercased())" }

    @Test("read and dismissed: applied to the cache at once and sent as a PATCH of the states given")
    func setState() async throws {
        let service = service { _ in .status(204) }
        let client = try Fixture.client(service)
        _ = try await client.sync()
        try await client.setState(of: notification.id, readState: .read)
        try await client.setState(of: notification.id, userActionState: .dismissed)
        #expect(await client.notification(id: notification.id)?.readState == .read)
        #expect(await client.notification(id: notification.id)?.userActionState == .dismissed)
        #expect(await client.pendingChangeCount == 0)
        let patches = service.requests.filter { $0.method == "PATCH" }
        #expect(patches.map(\.path) == [path, path])
        #expect(try patches.map { try $0.decoded(StateChangeRequest.self) } == [
            StateChangeRequest(readState: .read), StateChangeRequest(userActionState: .dismissed),
        ])
        #expect(await client.readBatch(filter: NotificationFilter(userActionState: .dismissed)).map(\.id) == [notification.id])
    }

    @Test("a deletion removes the notification from the cache and is sent as a DELETE")
    func delete() async throws {
        let service = service { _ in .status(204) }
        let client = try Fixture.client(service)
        _ = try await client.sync()
        try await client.delete(notification.id)
        #expect(await client.notification(id: notification.id) == nil)
        #expect(service.requests.last.map { "\($0.method) \($0.path)" } == "DELETE \(path)")
    }

    @Test("offline, a change stays queued (also across a relaunch) and is sent once, in order, when the service is back")
    func queuedWhileOffline() async throws {
        let online = Mutex(true)
        let service = service { _ in online.withLock { $0 } ? .status(204) : .offline }
        let storage = Fixture.storage()
        let client = try Fixture.client(service, storage: storage)
        _ = try await client.sync()
        online.withLock { $0 = false }
        try await client.setState(of: notification.id, readState: .read)
        try await client.delete(notification.id)
        #expect(await client.pendingChangeCount == 2)
        let offline = await #expect(throws: NotifyClientError.self) { try await client.flushPendingChanges() }
        #expect(offline?.code == .network)

        let relaunched = try Fixture.client(service, storage: storage)
        #expect(await relaunched.pendingChangeCount == 2)
        online.withLock { $0 = true }
        let before = service.requests.count
        try await relaunched.flushPendingChanges()
        try await relaunched.flushPendingChanges()
        #expect(await relaunched.pendingChangeCount == 0)
        #expect(service.requests.dropFirst(before).map { "\($0.method) \($0.path)" } == ["PATCH \(path)", "DELETE \(path)"])
    }

    @Test("a change the service can never apply (the notification is gone) is dropped; one refused for now stays queued")
    func permanentAndTransientRefusals() async throws {
        let gone = service { _ in try .error(404, "not_found") }
        let client = try Fixture.client(gone)
        _ = try await client.sync()
        try await client.setState(of: notification.id, readState: .read)
        #expect(await client.pendingChangeCount == 0)

        let busy = service { _ in try .error(503, "unavailable") }
        let queued = try Fixture.client(busy)
        _ = try await queued.sync()
        try await queued.setState(of: notification.id, readState: .read)
        #expect(await queued.pendingChangeCount == 1)
        let error = await #expect(throws: NotifyClientError.self) { try await queued.flushPendingChanges() }
        #expect(error?.statusCode == 503)
        #expect(await queued.pendingChangeCount == 1)
    }

    @Test("a sync first sends what is queued")
    func syncSendsQueued() async throws {
        let online = Mutex(false)
        let service = service { _ in online.withLock { $0 } ? .status(204) : .offline }
        let client = try Fixture.client(service)
        try await client.setState(of: notification.id, userActionState: .dismissed)
        online.withLock { $0 = true }
        _ = try await client.sync()
        #expect(await client.pendingChangeCount == 0)
        #expect(service.requests.suffix(2).map(\.method) == ["PATCH", "GET"])
    }

    @Test("a state change names at least one state")
    func noState() async throws {
        let service = service { _ in .status(204) }
        let client = try Fixture.client(service)
        let error = await #expect(throws: NotifyClientError.self) { try await client.setState(of: notification.id) }
        #expect(error?.code == .invalidArgument)
        #expect(service.requests.isEmpty)
    }

    @Test("which refusals drop a queued change (it can never apply) and which keep it for later", arguments: [
        (400, false), (403, false), (404, false), (409, false), (401, true), (408, true), (429, true), (500, true), (503, true),
    ])
    func refusalKinds(status: Int, kept: Bool) async throws {
        let client = try Fixture.client(service { _ in try .error(status, "refused") })
        _ = try await client.sync()
        try await client.setState(of: notification.id, readState: .read)
        #expect(await client.pendingChangeCount == (kept ? 1 : 0))
    }
}
