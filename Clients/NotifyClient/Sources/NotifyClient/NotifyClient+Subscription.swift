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
    /// the client registers the new token first and then unregisters the previous subscription, so the
    /// device is not registered twice; if that removal fails, the old registration lapses on its own
    /// (at its expiry, or when the provider reports the token invalid).
    @discardableResult
    public func subscribe(
        pushToken: String, platform: Platform = .apns, appPackage: String? = nil, displayName: String? = nil
    ) async throws -> Subscription {
        let body = try encode(SubscriptionRequest(platform: platform, pushToken: pushToken, appPackage: appPackage, displayName: displayName))
        let (data, _) = try await transport.send(transport.request("POST", "/v1/me/subscriptions", body: body))
        let registered = try decode(Registered.self, from: data)
        let previous = state.subscription
        let subscription = Subscription(
            id: registered.subscriptionId, expirationDateTime: registered.expirationDateTime, platform: platform,
            pushToken: pushToken, appPackage: appPackage, displayName: displayName)
        state.subscription = subscription
        try save()
        if let previous, previous.id != subscription.id {
            _ = try? await transport.send(transport.request("DELETE", "/v1/me/subscriptions/\(previous.id.uuidString.lowercased())"))
        }
        return subscription
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
