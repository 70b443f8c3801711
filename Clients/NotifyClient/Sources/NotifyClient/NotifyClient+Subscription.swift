import Foundation
import NotifyAPI

extension NotifyClient {
    private struct Registered: Decodable {
        var subscriptionId: UUID
        var expirationDateTime: Date
    }

    /// Registers this device for pushes and stores the subscription in the cache.
    ///
    /// Calling it again with the same token refreshes the registration (the service keeps the id and
    /// extends the expiry). With a NEW token (APNs rotated it, the app was restored on another device),
    /// the registration names the previous subscription as the one it replaces: the service moves its event
    /// sources to the new one and removes it, so the device is not registered twice. A token another user registered
    /// last (the device changed hands) is answered with a new subscription id, in no event source: the service removed
    /// the other user's subscription, and this one starts clean.
    @discardableResult
    public func subscribe(
        pushToken: String, platform: Platform = .apns, appPackage: String? = nil, displayName: String? = nil
    ) async throws -> Subscription {
        let previous = state.subscription
        let replaces = previous.flatMap { $0.pushToken != pushToken || $0.platform != platform ? $0.id : nil }
        // A polling registration names no token the first time; its token is then its subscription id.
        let sentToken = platform == .polling && pushToken.isEmpty ? nil : pushToken
        let body = try encode(SubscriptionRequest(
            platform: platform, pushToken: sentToken, appPackage: appPackage, displayName: displayName, replacesSubscriptionId: replaces))
        let (data, _) = try await transport.send(transport.request("POST", "/v1/me/subscriptions", body: body))
        let registered = try decode(Registered.self, from: data)
        let subscription = Subscription(
            id: registered.subscriptionId, expirationDateTime: registered.expirationDateTime, platform: platform,
            pushToken: platform == .polling ? registered.subscriptionId.lowercasedString : pushToken, appPackage: appPackage, displayName: displayName)
        state.subscription = subscription
        try save()
        return subscription
    }

    /// Registers this device without a push channel (`polling`): it syncs on its own schedule or holds the live stream,
    /// names itself in the changes it makes as a pushed device does, is in event sources and renews like one
    /// (`renewSubscriptionIfNeeded`); the service pushes nothing to it. Calling it again renews the same registration;
    /// a device that was registered with a push token before is registered anew, replacing that one.
    @discardableResult
    public func subscribeForPolling(appPackage: String? = nil, displayName: String? = nil) async throws -> Subscription {
        let renewed = state.subscription.flatMap { $0.platform == .polling ? $0.pushToken : nil }
        return try await subscribe(pushToken: renewed ?? "", platform: .polling, appPackage: appPackage, displayName: displayName)
    }

    /// Puts this device in the event source `name` (one with the `open` policy; the service answers 403 for one only
    /// the app server enrols in, 404 for one that does not exist). Broadcasts to the source then reach this device.
    /// `parameters` (scalars) replace the device's membership parameters, which a broadcast's `where` matches.
    public func subscribe(to name: String, parameters: [String: JSONValue]? = nil) async throws {
        let subscription = try requireSubscription()
        let body = try parameters.map { try encode(MembershipRequest(parameters: $0)) }
        _ = try await transport.send(transport.request(
            "PUT", "/v1/me/subscriptions/\(subscription.id.lowercasedString)/event-sources/\(try Self.pathSegment(name))", body: body))
    }

    /// Takes this device out of the event source `name`.
    public func unsubscribe(from name: String) async throws {
        let subscription = try requireSubscription()
        _ = try await transport.send(transport.request("DELETE", "/v1/me/subscriptions/\(subscription.id.lowercasedString)/event-sources/\(try Self.pathSegment(name))"))
    }

    /// Whether this device is in the event source `name`, as the service knows it now.
    public func isSubscribed(to name: String) async throws -> Bool {
        struct Listed: Decodable {
            var subscriptionId: UUID
            var eventSources: [String]?
        }
        struct Listing: Decodable {
            var subscriptions: [Listed]
        }
        let subscription = try requireSubscription()
        let (data, _) = try await transport.send(transport.request("GET", "/v1/me/subscriptions"))
        let listing = try decode(Listing.self, from: data)
        return listing.subscriptions.first { $0.subscriptionId == subscription.id }?.eventSources?.contains(name) ?? false
    }

    private func requireSubscription() throws(NotifyClientError) -> Subscription {
        guard let subscription = state.subscription else {
            throw NotifyClientError(.invalidArgument, "this device is not subscribed: call subscribe(pushToken:) first")
        }
        return subscription
    }

    /// An event source's name as one path segment (its characters need no escaping; others are refused).
    private static func pathSegment(_ name: String) throws(NotifyClientError) -> String {
        guard EventSourceRequest.isValidName(name) else {
            throw NotifyClientError(.invalidArgument, "an event source name is 1 to 100 characters of A-Z a-z 0-9 . _ : -")
        }
        return name
    }

    /// Removes this device's subscription from the service and the cache (no more pushes).
    /// The cached notifications and the cursor stay.
    public func unsubscribe() async throws {
        guard let subscription = state.subscription else { return }
        do {
            _ = try await transport.send(transport.request("DELETE", "/v1/me/subscriptions/\(subscription.id.uuidString.lowercased())"))
        } catch {
            // A 404 means the service no longer has it: the goal is reached.
            if !error.isServer(404) { throw error }
        }
        state.subscription = nil
        try save()
    }

    /// Registers the stored subscription again when it expires within `interval` (default 7 days).
    /// `sync()` (and so push processing and the live stream) calls it.
    /// - Returns: whether it renewed.
    @discardableResult
    public func renewSubscriptionIfNeeded(within interval: TimeInterval = 7 * 86_400) async throws -> Bool {
        guard let current = state.subscription, current.expirationDateTime.timeIntervalSinceNow < interval else { return false }
        try await subscribe(
            pushToken: current.pushToken, platform: current.platform, appPackage: current.appPackage, displayName: current.displayName)
        return true
    }
}
