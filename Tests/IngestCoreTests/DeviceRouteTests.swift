import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NotifyModels
import NotifyStore
import NotifyStoreTesting
import Testing

@testable import IngestCore

/// A device's registration and its event sources, and the app server's event sources and enrolments, in-process on
/// stores held in memory (the commands sent to storage applied to them as storage would).
@Suite struct DeviceRouteTests {
    private static let appPath = "/v1/apps/\(RouteTesting.appId)"
    private struct Registered: Decodable {
        var subscriptionId: String
        var platform: String
    }

    private struct Listing: Decodable {
        struct Device: Decodable {
            var subscriptionId: String
            var pushToken: String
            var displayName: String?
            var eventSources: [String]
        }

        var subscriptions: [Device]
    }

    private static func registration(token: String, sources: [String]? = nil) -> ByteBuffer {
        let sourcesField = sources.map { ",\"eventSources\":[\($0.map { "\"\($0)\"" }.joined(separator: ","))]" } ?? ""
        return ByteBuffer(string: #"{"platform":"apns","pushToken":"\#(token)","displayName":"Bob's phone"\#(sourcesField)}"#)
    }

    @Test("a device registers (201), registering the same token again keeps its id, it lists its devices with their sources, and it joins only open sources that exist")
    func registration() async throws {
        let testing = RouteTesting()
        let token = String(repeating: "b2", count: 32)
        try await testing.run { client in
            let bob = try await RouteTesting.bearerUser("bob")
            let first = try await client.execute(uri: "/v1/me/subscriptions", method: .post, headers: bob, body: Self.registration(token: token, sources: ["news"]))
            #expect(first.status == .created)
            let id = try RouteTesting.decode(Registered.self, first).subscriptionId
            let again = try await client.execute(uri: "/v1/me/subscriptions", method: .post, headers: bob, body: Self.registration(token: token))
            #expect(try RouteTesting.decode(Registered.self, again).subscriptionId == id)

            let listing = try RouteTesting.decode(Listing.self, try await client.execute(uri: "/v1/me/subscriptions", method: .get, headers: bob))
            #expect(listing.subscriptions.map(\.subscriptionId) == [id])
            #expect(listing.subscriptions.first?.eventSources == ["news"] && listing.subscriptions.first?.displayName == "Bob's phone")
            // Alice's devices are not Bob's.
            #expect(!listing.subscriptions.contains { $0.subscriptionId == FixedTargets.subscriptionId.lowercasedString })

            let unknown = try await client.execute(
                uri: "/v1/me/subscriptions", method: .post, headers: bob, body: Self.registration(token: token, sources: ["news", "sports"]))
            #expect(unknown.status == .notFound)
            #expect(try ErrorBody(unknown).error.field == "eventSources[1]")
            testing.devices.apply(.putEventSource(EventSourceRecord(
                appId: RouteTesting.appId, name: "alerts", policy: .appServer, description: nil, createdAt: Date())))
            let closed = try await client.execute(
                uri: "/v1/me/subscriptions", method: .post, headers: bob, body: Self.registration(token: token, sources: ["alerts"]))
            #expect(closed.status == .forbidden)
            #expect(try ErrorBody(closed).error.field == "eventSources[0]")
            let badToken = try await client.execute(uri: "/v1/me/subscriptions", method: .post, headers: bob, body: Self.registration(token: "not hex"))
            #expect(try ErrorBody(badToken).error.field == "pushToken")
        }
    }

    @Test("a polling device registers without a token (201, its token is its id), renews by naming its id, and cannot take another user's registration by naming theirs; keys or a token that is not an id are refused")
    func pollingRegistration() async throws {
        let testing = RouteTesting()
        try await testing.run { client in
            let bob = try await RouteTesting.bearerUser("bob"), carol = try await RouteTesting.bearerUser("carol")
            func register(_ user: HTTPFields, _ body: String) async throws -> TestResponse {
                try await client.execute(uri: "/v1/me/subscriptions", method: .post, headers: user, body: ByteBuffer(string: body))
            }
            let first = try await register(bob, #"{"platform":"polling","displayName":"Bob's watch"}"#)
            #expect(first.status == .created)
            let registered = try RouteTesting.decode(Registered.self, first)
            #expect(registered.platform == "polling")
            let listing = try RouteTesting.decode(Listing.self, try await client.execute(uri: "/v1/me/subscriptions", method: .get, headers: bob))
            #expect(listing.subscriptions.map(\.pushToken) == [registered.subscriptionId])

            let renewed = try await register(bob, #"{"platform":"polling","pushToken":"\#(registered.subscriptionId.uppercased())"}"#)
            #expect(try RouteTesting.decode(Registered.self, renewed).subscriptionId == registered.subscriptionId)
            let taken = try await register(carol, #"{"platform":"polling","pushToken":"\#(registered.subscriptionId)"}"#)
            #expect(try RouteTesting.decode(Registered.self, taken).subscriptionId != registered.subscriptionId)
            let bobs = try RouteTesting.decode(Listing.self, try await client.execute(uri: "/v1/me/subscriptions", method: .get, headers: bob))
            #expect(bobs.subscriptions.map(\.subscriptionId) == [registered.subscriptionId], "Bob's registration is still his")

            let notAnId = try await register(bob, #"{"platform":"polling","pushToken":"abc"}"#)
            #expect(notAnId.status == .badRequest)
            #expect(try ErrorBody(notAnId).error.field == "pushToken")
            let withKeys = try await register(bob, #"{"platform":"polling","keys":{"p256dh":"x","auth":"y"}}"#)
            #expect(withKeys.status == .badRequest)
            #expect(try ErrorBody(withKeys).error.field == "keys")
        }
    }

    @Test("a device deletes its own subscription (204, storage is told) but not another user's (404 naming subscriptionId)")
    func unsubscribe() async throws {
        let testing = RouteTesting()
        try await testing.run { client in
            let stranger = try await client.execute(
                uri: "/v1/me/subscriptions/\(FixedTargets.subscriptionId)", method: .delete, headers: try await RouteTesting.bearerUser("mallory"))
            #expect(stranger.status == .notFound)
            #expect(try ErrorBody(stranger).error.field == "subscriptionId")
            #expect(testing.published.commands.isEmpty)
            let own = try await client.execute(uri: "/v1/me/subscriptions/\(FixedTargets.subscriptionId)", method: .delete, headers: try await RouteTesting.bearerUser("alice"))
            #expect(own.status == .noContent)
            guard case .unregisterSubscription(_, let userId, let id) = testing.published.commands.last?.action else {
                Issue.record("storage was not told")
                return
            }
            #expect(userId == "alice" && id == FixedTargets.subscriptionId)
        }
    }

    @Test("the app defines event sources (201, then 200 on a change) and lists them with their members; read keys cannot, unknown ones are 404 naming eventSource")
    func eventSources() async throws {
        let testing = RouteTesting()
        try await testing.run { client in
            let created = try await client.execute(
                uri: "\(Self.appPath)/event-sources", method: .post, headers: RouteTesting.apiKeyHeaders, body: ByteBuffer(string: #"{"name":"alerts","policy":"appServer"}"#))
            #expect(created.status == .created)
            #expect(created.headers[.location] == "\(Self.appPath)/event-sources/alerts")
            let changed = try await client.execute(
                uri: "\(Self.appPath)/event-sources", method: .post, headers: RouteTesting.apiKeyHeaders,
                body: ByteBuffer(string: #"{"name":"alerts","policy":"open","description":"now open"}"#))
            #expect(changed.status == .ok)
            #expect(try RouteTesting.decode(EventSourceView.self, changed).policy == .open)
            let shown = try RouteTesting.decode(
                EventSourceView.self, try await client.execute(uri: "\(Self.appPath)/event-sources/alerts", method: .get, headers: [.authorization: "Bearer read-key"]))
            #expect((shown.name, shown.policy, shown.description) == ("alerts", .open, "now open"))

            struct Sources: Decodable { var eventSources: [EventSourceView] }
            let listed = try RouteTesting.decode(Sources.self, try await client.execute(uri: "\(Self.appPath)/event-sources", method: .get, headers: RouteTesting.apiKeyHeaders))
            #expect(listed.eventSources.map(\.name) == ["alerts", "news"])
            #expect(listed.eventSources.last?.memberDevices == 1 && listed.eventSources.last?.memberUsers == 1)

            let readOnly = try await client.execute(
                uri: "\(Self.appPath)/event-sources", method: .post, headers: [.authorization: "Bearer read-key"],
                body: ByteBuffer(string: #"{"name":"x","policy":"open"}"#))
            #expect(readOnly.status == .forbidden)
            let missing = try await client.execute(uri: "\(Self.appPath)/event-sources/sports", method: .get, headers: RouteTesting.apiKeyHeaders)
            #expect(missing.status == .notFound)
            #expect(try ErrorBody(missing).error.field == "eventSource")
            let deleted = try await client.execute(uri: "\(Self.appPath)/event-sources/alerts", method: .delete, headers: RouteTesting.apiKeyHeaders)
            #expect(deleted.status == .noContent)
        }
    }

    @Test("the app server enrols a user's devices in a source and removes them, or one device; a device leaves and joins open sources itself, never an appServer one")
    func memberships() async throws {
        let testing = RouteTesting()
        testing.devices.apply(.putEventSource(EventSourceRecord(appId: RouteTesting.appId, name: "alerts", policy: .appServer, description: nil, createdAt: Date())))
        let phone = FixedTargets.subscriptionId.lowercasedString
        try await testing.run { client in
            let enrolled = try await client.execute(uri: "\(Self.appPath)/users/alice/event-sources/alerts", method: .put, headers: RouteTesting.apiKeyHeaders)
            #expect(enrolled.status == .ok)
            let membership = try RouteTesting.decode(EventSourceMembership.self, enrolled)
            #expect(membership.subscribed && membership.subscriptionIds == [FixedTargets.subscriptionId])

            struct Memberships: Decodable { var eventSources: [EventSourceMembership] }
            let all = try RouteTesting.decode(Memberships.self, try await client.execute(uri: "\(Self.appPath)/users/alice/event-sources", method: .get, headers: RouteTesting.apiKeyHeaders))
            #expect(all.eventSources.map(\.eventSource) == ["alerts", "news"])

            let removed = try await client.execute(uri: "\(Self.appPath)/subscriptions/\(phone)/event-sources/alerts", method: .delete, headers: RouteTesting.apiKeyHeaders)
            #expect(try RouteTesting.decode(EventSourceMembership.self, removed).subscribed == false)
            let enrolledAgain = try await client.execute(uri: "\(Self.appPath)/subscriptions/\(phone)/event-sources/alerts", method: .put, headers: RouteTesting.apiKeyHeaders)
            #expect(try RouteTesting.decode(EventSourceMembership.self, enrolledAgain).subscriptionIds == [FixedTargets.subscriptionId])
            let userRemoved = try await client.execute(uri: "\(Self.appPath)/users/alice/event-sources/alerts", method: .delete, headers: RouteTesting.apiKeyHeaders)
            #expect(userRemoved.status == .ok)
            #expect(try RouteTesting.decode(EventSourceMembership.self, userRemoved) == EventSourceMembership(eventSource: "alerts", subscribed: false, subscriptionIds: []))
            let unknownDevice = try await client.execute(uri: "\(Self.appPath)/subscriptions/\(UUID())/event-sources/alerts", method: .put, headers: RouteTesting.apiKeyHeaders)
            #expect(try ErrorBody(unknownDevice).error.field == "subscriptionId")

            let alice = try await RouteTesting.bearerUser("alice")
            let left = try await client.execute(uri: "/v1/me/subscriptions/\(phone)/event-sources/news", method: .delete, headers: alice)
            #expect(left.status == .noContent)
            let rejoined = try await client.execute(uri: "/v1/me/subscriptions/\(phone)/event-sources/news", method: .put, headers: alice)
            #expect(rejoined.status == .noContent)
            let closed = try await client.execute(uri: "/v1/me/subscriptions/\(phone)/event-sources/alerts", method: .put, headers: alice)
            #expect(closed.status == .forbidden)
            let notHers = try await client.execute(
                uri: "/v1/me/subscriptions/\(phone)/event-sources/news", method: .delete, headers: try await RouteTesting.bearerUser("mallory"))
            #expect(notHers.status == .notFound)
            let asked = try RouteTesting.decode(
                EventSourceMembership.self, try await client.execute(uri: "\(Self.appPath)/users/alice/event-sources/news", method: .get, headers: RouteTesting.apiKeyHeaders))
            #expect(asked.subscribed)
        }
    }
}
