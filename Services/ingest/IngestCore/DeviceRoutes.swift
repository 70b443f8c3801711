import Foundation
import Hummingbird
import NotifyModels
import NotifyStore
import PostgresNIO

/// `POST`/`GET /v1/me/subscriptions` and `DELETE /v1/me/subscriptions/{id}` (user token).
struct DeviceRoutes: Sendable {
    let authenticator: Authenticator
    let sender: CommandSender
    let visibility: WriteVisibility
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
        let (platform, token): (Platform, String)
        do {
            (platform, token) = try body.validated()
        } catch {
            throw APIFailure(error)
        }
        try outbound.requirePushEndpoint(token, platform: platform, field: "pushToken")
        if let sources = body.eventSources { try await checkJoinable(sources, appId: user.appId) }
        let now = Date()
        let existing = try? await visibility.client.query(
            """
            SELECT subscription_id FROM subscriptions
            WHERE app_id = \(user.appId) AND platform = \(platform.rawValue) AND push_token = \(token) AND user_id = \(user.userId)
            """, logger: visibility.logger
        ).decode(UUID.self).first(where: { _ in true })
        let subscription = DeviceSubscription(
            subscriptionId: existing ?? UUID.random(), appId: user.appId, userId: user.userId, platform: platform, pushToken: token, keys: body.keys,
            appPackage: body.appPackage, displayName: body.displayName,
            expirationDateTime: now.addingTimeInterval(subscriptionLifetime), registeredAt: now, eventSources: body.eventSources,
            replacesSubscriptionId: body.replacesSubscriptionId)
        let stored = try await visibility.send(
            StorageCommand(action: .registerSubscription(subscription)), thenRead: UUID.self,
            """
            SELECT subscription_id FROM subscriptions
            WHERE app_id = \(user.appId) AND platform = \(platform.rawValue) AND push_token = \(token)
              AND user_id = \(user.userId) AND registered_at >= \(now.addingTimeInterval(-0.001))
            """)
        return try JSONResponse.make(
            stored != nil ? .created : .accepted,
            Registered(subscriptionId: stored ?? subscription.subscriptionId, platform: platform, expirationDateTime: subscription.expirationDateTime))
    }

    /// The user's device subscriptions.
    private func list(_ request: Request) async throws -> Response {
        let user = try await authenticator.requireUser(request)
        var listed: [Listed] = []
        do {
            let rows = try await visibility.client.query(
                """
                SELECT s.subscription_id, s.platform, s.push_token, s.display_name, s.expires_at,
                       coalesce(array_agg(m.event_source ORDER BY m.event_source) FILTER (WHERE m.event_source IS NOT NULL), '{}')
                FROM subscriptions s LEFT JOIN event_source_members m ON m.subscription_id = s.subscription_id
                WHERE s.app_id = \(user.appId) AND s.user_id = \(user.userId)
                GROUP BY s.subscription_id ORDER BY s.registered_at
                """, logger: visibility.logger)
            for try await (id, platform, token, name, expires, sources) in rows.decode((UUID, String, String, String?, Date, [String]).self) {
                listed.append(Listed(
                    subscriptionId: id, platform: platform, pushToken: token, displayName: name, expirationDateTime: expires, eventSources: sources))
            }
        } catch {
            throw APIFailure.databaseUnavailable
        }
        return try JSONResponse.make(.ok, Listing(subscriptions: listed))
    }

    /// A device may join only sources that exist and are open: 404 or 403 naming the source's place in the list.
    private func checkJoinable(_ names: [String], appId: String) async throws {
        let policies: [String: EventSourcePolicy]
        do {
            policies = try await PostgresTargetDirectory(client: visibility.client, logger: visibility.logger).eventSources(appId: appId, named: names)
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
        let owned = try? await visibility.client.query(
            "SELECT 1 FROM subscriptions WHERE subscription_id = \(subscriptionId) AND app_id = \(user.appId) AND user_id = \(user.userId)",
            logger: visibility.logger
        ).collect().count
        guard owned == 1 else {
            throw APIFailure(.notFound, code: "subscription_not_found", message: "no subscription \(subscriptionId) of this user", field: "subscriptionId")
        }
        try await sender.send([StorageCommand(action: .unregisterSubscription(appId: user.appId, userId: user.userId, subscriptionId: subscriptionId))])
        return Response(status: .noContent)
    }
}
