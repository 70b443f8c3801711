import Foundation
import NotifyAPI
import Testing

@testable import NotifyClient

/// Registering the device for pushes, renewing and removing the registration, and its event sources.
@Suite struct RegistrationTests {
    let subscriptionId = UUID()
    let expiry = Date(timeIntervalSinceNow: 30 * 86_400)

    /// A service that registers every device as `subscriptionId`, expiring at `expiry`.
    func registering() -> FakeService {
        let registered = Fixture.Registered(subscriptionId: subscriptionId, expirationDateTime: expiry)
        return FakeService { request in
            request.method == "POST" && request.path == "/v1/me/subscriptions" ? try .ok(registered) : .status(204)
        }
    }

    @Test("subscribing registers the token and keeps the subscription, which a relaunched client still has")
    func subscribe() async throws {
        let service = registering()
        let storage = Fixture.storage()
        let client = try Fixture.client(service, storage: storage)
        let subscription = try await client.subscribe(pushToken: "ab12", platform: .fcm, appPackage: "com.example.app", displayName: "phone")
        #expect(subscription.id == subscriptionId)
        #expect(subscription.pushToken == "ab12")
        #expect(abs(subscription.expirationDateTime.timeIntervalSince(expiry)) < 0.001)
        let sent = try #require(service.requests.first).decoded(SubscriptionRequest.self)
        #expect(sent.platform == .fcm)
        #expect(sent.pushToken == "ab12")
        #expect(sent.appPackage == "com.example.app")
        #expect(sent.displayName == "phone")
        #expect(sent.replacesSubscriptionId == nil)
        #expect(await client.subscription == subscription)
        let relaunched = try Fixture.client(service, storage: storage)
        #expect(await relaunched.subscription == subscription)
        #expect(service.requests.count == 1, "read from the cache")
    }

    @Test("a new token names the subscription it replaces; the same token again does not")
    func newTokenReplaces() async throws {
        let service = registering()
        let client = try Fixture.client(service)
        try await client.subscribe(pushToken: "first")
        try await client.subscribe(pushToken: "first")
        try await client.subscribe(pushToken: "rotated")
        let sent = try service.requests.map { try $0.decoded(SubscriptionRequest.self) }
        #expect(sent.map(\.replacesSubscriptionId) == [nil, nil, subscriptionId])
    }

    @Test("a polling registration sends no token, keeps its id as its token, and renews by naming it; one that had a push token replaces it")
    func polling() async throws {
        let service = registering()
        let client = try Fixture.client(service)
        try await client.subscribe(pushToken: "ab12", platform: .fcm)
        let subscription = try await client.subscribeForPolling(displayName: "watch")
        #expect(subscription.platform == .polling && subscription.pushToken == subscriptionId.uuidString.lowercased())
        #expect(try await client.renewSubscriptionIfNeeded(within: 60 * 86_400) == true)
        let sent = try service.requests.map { try $0.decoded(SubscriptionRequest.self) }
        #expect(sent.map(\.platform) == [.fcm, .polling, .polling])
        #expect(sent[1].pushToken == nil && sent[1].replacesSubscriptionId == subscriptionId, "the FCM registration is replaced")
        #expect(sent[2].pushToken == subscriptionId.uuidString.lowercased() && sent[2].replacesSubscriptionId == nil)
        #expect(sent[2].displayName == "watch")
    }

    @Test("a subscription near its expiry is registered again; one far from it is not")
    func renewal() async throws {
        let service = registering()
        let client = try Fixture.client(service)
        try await client.subscribe(pushToken: "ab12", displayName: "phone")
        #expect(try await client.renewSubscriptionIfNeeded(within: 86_400) == false)
        #expect(service.requests.count == 1)
        #expect(try await client.renewSubscriptionIfNeeded(within: 60 * 86_400) == true)
        let renewed = try #require(service.requests.last).decoded(SubscriptionRequest.self)
        #expect(renewed.pushToken == "ab12")
        #expect(renewed.displayName == "phone")
    }

    @Test("unsubscribing removes the registration, also when the service no longer has it; a failure keeps it")
    func unsubscribe() async throws {
        let goneAlready = FakeService { request in
            request.method == "POST" ? try .ok(Fixture.Registered(subscriptionId: subscriptionId, expirationDateTime: expiry)) : try .error(404, "not_found")
        }
        let client = try Fixture.client(goneAlready)
        try await client.subscribe(pushToken: "ab12")
        try await client.unsubscribe()
        #expect(await client.subscription == nil)
        #expect(goneAlready.requests.last?.method == "DELETE")
        #expect(goneAlready.requests.last?.path == "/v1/me/subscriptions/\(subscriptionId.uuidString.lowercased())")

        let failing = FakeService { request in
            request.method == "POST" ? try .ok(Fixture.Registered(subscriptionId: subscriptionId, expirationDateTime: expiry)) : try .error(503, "unavailable")
        }
        let kept = try Fixture.client(failing)
        try await kept.subscribe(pushToken: "ab12")
        await #expect(throws: NotifyClientError.self) { try await kept.unsubscribe() }
        #expect(await kept.subscription?.id == subscriptionId)
    }

    @Test("the device joins and leaves an event source by its subscription, and asks whether it is in one")
    func eventSources() async throws {
        let listing = #"{"subscriptions":[{"subscriptionId":"\#(subscriptionId.uuidString.lowercased())","eventSources":["breaking-news"]}]}"#
        let registered = Fixture.Registered(subscriptionId: subscriptionId, expirationDateTime: expiry)
        let service = FakeService { request in
            switch (request.method, request.path) {
            case ("POST", _): return try .ok(registered)
            case ("GET", "/v1/me/subscriptions"): return .status(200, json: listing)
            default: return .status(204)
            }
        }
        let client = try Fixture.client(service)
        try await client.subscribe(pushToken: "ab12")
        try await client.subscribe(to: "breaking-news")
        try await client.unsubscribe(from: "breaking-news")
        #expect(try await client.isSubscribed(to: "breaking-news"))
        #expect(try await client.isSubscribed(to: "sports") == false)
        let path = "/v1/me/subscriptions/\(subscriptionId.uuidString.lowercased())/event-sources/breaking-news"
        #expect(service.requests.dropFirst().prefix(2).map { "\($0.method) \($0.path)" } == ["PUT \(path)", "DELETE \(path)"])
        try await client.subscribe(to: "teams", parameters: ["team": .string("red")])
        let joined = try #require(service.requests.last { $0.method == "PUT" })
        #expect(try joined.decoded(MembershipRequest.self).parameters == ["team": .string("red")])
    }

    @Test("event sources need a subscription and a valid name; neither mistake reaches the service")
    func eventSourceMistakes() async throws {
        let service = registering()
        let client = try Fixture.client(service)
        let unsubscribed = await #expect(throws: NotifyClientError.self) { try await client.subscribe(to: "news") }
        #expect(unsubscribed?.code == .invalidArgument)
        try await client.subscribe(pushToken: "ab12")
        let invalid = await #expect(throws: NotifyClientError.self) { try await client.subscribe(to: "news/../admin") }
        #expect(invalid?.code == .invalidArgument)
        #expect(service.requests.count == 1, "only the registration")
    }

    @Test("a sync first registers again a subscription that expires within a week")
    func syncRenews() async throws {
        let registered = Fixture.Registered(subscriptionId: subscriptionId, expirationDateTime: Date(timeIntervalSinceNow: 2 * 86_400))
        let service = FakeService { request in request.method == "POST" ? try .ok(registered) : try .ok(Fixture.page([], through: 0)) }
        let client = try Fixture.client(service)
        try await client.subscribe(pushToken: "ab12")
        _ = try await client.sync()
        #expect(service.requests.map(\.method) == ["POST", "POST", "GET"])
    }

    @Test("unsubscribing without a subscription asks nothing of the service")
    func unsubscribeUnsubscribed() async throws {
        let service = registering()
        try await Fixture.client(service).unsubscribe()
        #expect(service.requests.isEmpty)
    }
}
