import Foundation
import NotifyAPI
import Testing

@testable import NotifyClient

/// `processPushNotification`: pushes of this service turn into a sync, others are left alone.
@Suite struct PushProcessingTests {
    let first = Fixture.notification(sequence: 1)
    let second = Fixture.notification(sequence: 2)

    /// A service whose change log holds `first` and `second`.
    func service() -> FakeService {
        let changes = [Fixture.change(.created, first), Fixture.change(.created, second)]
        return FakeService { request in
            let after = (try? SyncCursor.decode(request.query["cursor"]))?.sequence ?? 0
            return try .ok(Fixture.page(changes.filter { $0.sequence > after }, through: 2))
        }
    }

    @Test("a push of another service is not ours, and costs no request")
    func notOurs() async throws {
        let service = service()
        let client = try Fixture.client(service)
        #expect(try await client.processPushNotification(["aps": ["alert": "hi"]]) == .notOurs)
        #expect(try await client.processPushNotification(["notify": ["seq": 4]]) == .notOurs, "no notification id")
        #expect(service.requests.isEmpty)
    }

    @Test("our push syncs from the cursor, catching up on pushes that never came; one the cache has reached changes nothing")
    func ours() async throws {
        let service = service()
        let client = try Fixture.client(service)
        let push: [AnyHashable: Any] = ["aps": ["content-available": 1], "notify": ["id": second.id.uuidString.lowercased(), "seq": 2, "kind": "created"]]
        #expect(try await client.processPushNotification(push) == .processed([Fixture.change(.created, first), Fixture.change(.created, second)]))
        #expect(try await client.processPushNotification(push) == .processed([]))
        #expect(service.requests.count == 1, "the second push needed no sync")
    }

    @Test("every provider's marker is recognised: FCM's data keys and a WNS toast's launch arguments")
    func providersMarkers() async throws {
        let id = second.id.uuidString.lowercased()
        for push: [AnyHashable: Any] in [["notifyId": id, "notifySeq": "2", "notifyKind": "created"], ["launch": "notifyId=\(id)&notifySeq=2"]] {
            let client = try Fixture.client(service())
            #expect(try await client.processPushNotification(push) == .processed([Fixture.change(.created, first), Fixture.change(.created, second)]))
        }
    }

    @Test("a broadcast's push (sequence 0) always syncs")
    func broadcast() async throws {
        let service = service()
        let client = try Fixture.client(service)
        _ = try await client.sync()
        let push: [AnyHashable: Any] = ["notify": ["id": UUID().uuidString.lowercased(), "seq": 0, "kind": "created"]]
        #expect(try await client.processPushNotification(push) == .processed([]))
        #expect(service.requests.count == 2)
    }
}
