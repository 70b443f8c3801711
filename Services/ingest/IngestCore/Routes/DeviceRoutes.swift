import Foundation
import Hummingbird
import NotifyModels
import NotifyStore

/// `POST`/`GET /v1/me/subscriptions` and `DELETE /v1/me/subscriptions/{id}` (user token).
struct DeviceRoutes: Sendable {
    let authenticator: Authenticator
    let sender: CommandSender
    let visibility: WriteVisibility
    let devices: any DeviceStore
    let targets: any TargetDirectory
    let subscriptionLifetime: TimeInterval
    let outbound: OutboundURLCheck

    private struct Registered: Encodable {
        @LowercasedUUID var subscriptionId: UUID
        var platform: Platform
        var expirationDateTime: Date
    }

    /// A subscription as its device sees it.
    private struct Listed: Encodable {
        @LowercasedUUID var subscriptionId: UUID
        var platform: String
        var pushToken: String
        var displayName: String?
        var expirationDateTime: Date
        /// The event sources the device is in.
        var eventSources: [String]
    }

    private struct Listing: Encodable {
        var subscriptions: [Listed]
    }

    func register(on router: Router<BasicRequestContext>) {
        router.post("/v1/me/subscriptions") { request, _ in try await subscribe(request) }
        router.get("/v1/me/subscriptions") { request, _ in try await list(request) }
        router.delete("/v1/me/subscriptions/:subscriptionId") { request, context in
            try await unsubscribe(request, id: try context.parameters.require("subscriptionId"))
        }
    }

    /// Registering the same token again updates that subscription (and keeps its id). A token another user registered
    /// gets a new subscription of this user: storage takes it from the other user, so the device starts clean.
    private func subscribe(_ request: Request) async throws -> Response {
        let user = try await authenticator.requireUser(request)
        let body = try await JSONResponse.decode(SubscriptionRequest.self, from: request)
        let platform: Platform
        var token: String
        do {
            (platform, token) = try body.validated()
        } catch {
            throw APIFailure(error)
        }
        try outbound.requirePushEndpoint(token, platform: platform, field: "pushToken")
        if let sources = body.eventSources { try await checkJoinable(sources, appId: user.appId) }
        let now = Date()
        let existing: UUID?
        if token.isEmpty {
            existing = nil
        } else if platform == .polling {
            // Not found (or not readable) here would give the device a second registration, not a renewal.
            existing = try await APIFailure.reading {
                try await devices.subscriptionId(appId: user.appId, userId: user.userId, platform: platform, pushToken: token, registeredSince: nil)
            }
        } else {
            existing = try? await devices.subscriptionId(
                appId: user.appId, userId: user.userId, platform: platform, pushToken: token, registeredSince: nil)
        }
        let subscriptionId = existing ?? UUID.random()
        // A polling device's token is its subscription id: a new one (or one naming a subscription that is not this
        // user's) gets a new id, and so cannot take over another device's registration.
        if platform == .polling, existing == nil { token = subscriptionId.lowercasedString }
        let subscription = DeviceSubscription(
            subscriptionId: subscriptionId, appId: user.appId, userId: user.userId, platform: platform, pushToken: token, keys: body.keys,
            appPackage: body.appPackage, displayName: body.displayName,
            expirationDateTime: now.addingTimeInterval(subscriptionLifetime), registeredAt: now, eventSources: body.eventSources,
            replacesSubscriptionId: body.replacesSubscriptionId)
        let stored = try await visibility.send(StorageCommand(action: .registerSubscription(subscription))) { [devices, token] in
            try await devices.subscriptionId(
                appId: user.appId, userId: user.userId, platform: platform, pushToken: token, registeredSince: now.addingTimeInterval(-0.001))
        }
        return try JSONResponse.make(
            stored != nil ? .created : .accepted,
            Registered(subscriptionId: stored ?? subscription.subscriptionId, platform: platform, expirationDateTime: subscription.expirationDateTime))
    }

    /// The user's device subscriptions.
    private func list(_ request: Request) async throws -> Response {
        let user = try await authenticator.requireUser(request)
        let found: [DeviceListing]
        do {
            found = try await devices.devices(appId: user.appId, userId: user.userId)
        } catch {
            throw APIFailure.databaseUnavailable
        }
        return try JSONResponse.make(.ok, Listing(subscriptions: found.map { device in
            Listed(
                subscriptionId: device.subscriptionId, platform: device.platform, pushToken: device.pushToken, displayName: device.displayName,
                expirationDateTime: device.expiresAt, eventSources: device.eventSources)
        }))
    }

    /// A device may join only sources that exist and are open: 404 or 403 naming the source's place in the list.
    private func checkJoinable(_ names: [String], appId: String) async throws {
        let policies: [String: EventSourcePolicy]
        do {
            policies = try await targets.eventSources(appId: appId, named: names)
        } catch {
            throw APIFailure.databaseUnavailable
        }
        for (index, name) in names.enumerated() {
            guard let policy = policies[name] else {
                throw APIFailure(.notFound, code: "event_source_not_found", message: "no event source \(name) in this app", field: "eventSources[\(index)]")
            }
            if policy != .open {
                throw APIFailure(.forbidden, code: "forbidden", message: "only the app server enrols devices in \(name)", field: "eventSources[\(index)]")
            }
        }
    }

    private func unsubscribe(_ request: Request, id: String) async throws -> Response {
        let user = try await authenticator.requireUser(request)
        guard let subscriptionId = UUID(uuidString: id) else {
            throw APIFailure(ValidationError.invalid("subscriptionId", "subscriptionId must be a UUID"))
        }
        let owner: String?
        do {
            owner = try await devices.owner(appId: user.appId, subscriptionId: subscriptionId)
        } catch {
            throw APIFailure.databaseUnavailable
        }
        guard owner == user.userId else {
            throw APIFailure(.notFound, code: "subscription_not_found", message: "no subscription \(subscriptionId) of this user", field: "subscriptionId")
        }
        try await sender.send([StorageCommand(action: .unregisterSubscription(appId: user.appId, userId: user.userId, subscriptionId: subscriptionId))])
        return Response(status: .noContent)
    }
}
